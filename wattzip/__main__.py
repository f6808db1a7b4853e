from wattzip.cli import main

raise SystemExit(main())
