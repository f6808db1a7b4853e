"""Which cells (file type, codec) a study measures: every codec on every file type, but
for the codecs `codec_file_types` names, measured on the file types it lists only."""

from __future__ import annotations

from wattzip.errors import ConfigError


class CellScope:
    """The study's measured cells, checked against its codecs and file types."""

    def __init__(self, limited: dict[str, list[str]], codecs: list[str],
                 file_types: list[str]):
        for codec, types in limited.items():
            if codec not in codecs:
                raise ConfigError(f"codec_file_types: {codec!r} is not among the study's "
                                  f"codecs {codecs}")
            unknown = [t for t in types if t not in file_types]
            if unknown:
                raise ConfigError(f"codec_file_types.{codec}: {unknown} not among the "
                                  f"study's file_types {file_types}")
        self.limited = {c: list(t) for c, t in limited.items()}
        self.codecs, self.file_types = list(codecs), list(file_types)

    def measures(self, file_type: str, codec: str) -> bool:
        """Whether the cell is measured (plain, and every codec not limited, always)."""
        return file_type in self.limited.get(codec, [file_type])

    def codecs_on(self, file_type: str) -> list[str]:
        return [c for c in self.codecs if self.measures(file_type, c)]

    def unmeasured(self) -> dict[str, list[str]]:
        """Each limited codec's file types left unmeasured, in the config's order."""
        return {c: [t for t in self.file_types if t not in types]
                for c, types in self.limited.items()
                if any(t not in types for t in self.file_types)}

    def describe(self) -> str:
        """The cells left unmeasured as a clause, "" when every cell is measured."""
        return "; ".join(f"{c} measured on {', '.join(self.limited[c])} only, not on "
                         f"{', '.join(types)}" for c, types in self.unmeasured().items())
