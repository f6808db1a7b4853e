#!/usr/bin/env bash
# A throw-away Slurm cluster on this machine, for the tests: munge, slurmctld and two
# slurmd nodes (n1 with feature alpha, n2 with beta) from Debian's packages, status by
# squeue (no accounting database). As root, on Debian 12; addresses are 127.0.0.1, so
# the host name need not resolve (a fresh chroot's /etc/hosts does not know it).
#   tests/slurm/cluster.sh up | down
set -euo pipefail
state=/tmp/wattzip-slurm
case "${1:-}" in
up)
  mkdir -p "$state"
  if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null; then
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
        --no-install-recommends munge slurmctld slurmd slurm-client; } >"$state/apt.log" 2>&1 \
      || { echo "cluster.sh: installing Slurm failed:" >&2; grep -v "^Selecting\|^Preparing\|^Unpacking" "$state/apt.log" | tail -60 >&2; exit 1; }
  fi
  [ -s /etc/munge/munge.key ] || { mungekey -c -f; chown munge:munge /etc/munge/munge.key; chmod 400 /etc/munge/munge.key; }
  install -d -o munge -g munge -m 755 /run/munge
  [ -s /run/munge/munged.pid ] && kill -0 "$(cat /run/munge/munged.pid)" 2>/dev/null \
    || runuser -u munge -- /usr/sbin/munged
  install -d -o slurm -g slurm /var/spool/slurmctld /var/log/slurm
  mkdir -p /var/spool/slurmd
  host=$(hostname -s)
  cpus=$(nproc)
  # A slurm.conf that is not this cluster's is kept aside and put back by down.
  if [ -e /etc/slurm/slurm.conf ] && ! grep -qx 'ClusterName=wattzip-test' /etc/slurm/slurm.conf \
      && [ ! -e "$state/slurm.conf.before" ]; then
    cp -p /etc/slurm/slurm.conf "$state/slurm.conf.before"
  fi
  cat > /etc/slurm/slurm.conf <<EOT
ClusterName=wattzip-test
SlurmctldHost=$host(127.0.0.1)
SlurmUser=slurm
AuthType=auth/munge
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=500
SlurmdParameters=config_overrides
ReturnToService=2
MinJobAge=300
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd-%n.pid
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd/%n
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd-%n.log
NodeName=n1 NodeHostname=$host NodeAddr=127.0.0.1 Port=17001 CPUs=$cpus RealMemory=4000 Features=alpha State=UNKNOWN
NodeName=n2 NodeHostname=$host NodeAddr=127.0.0.1 Port=17002 CPUs=$cpus RealMemory=4000 Features=beta State=UNKNOWN
PartitionName=main Nodes=n1,n2 Default=YES MaxTime=INFINITE State=UP
EOT
  # -c: a clean cluster, without the jobs a killed test run left queued in the saved
  # state (recovered, they would hold the nodes, or run again beside the tests).
  /usr/sbin/slurmctld -c
  /usr/sbin/slurmd -N n1
  /usr/sbin/slurmd -N n2
  for _ in $(seq 1 120); do
    [ "$(sinfo -h -N -o %T 2>/dev/null | grep -cx idle)" = 2 ] && { sinfo -N -o '%N %T %c %f'; exit 0; }
    sleep 0.5
  done
  echo "cluster.sh: the two nodes did not come up" >&2; exit 1 ;;
down)
  # Every job first, with its steps and what they started (slurmd signals the steps'
  # processes): a job left running after a failed test would go on measuring beside
  # the tests that follow. Only this cluster's jobs: scancel asks this slurm.conf's
  # controller, and no process is killed by name (another Slurm may run here).
  if [ -s /run/slurmctld.pid ] && kill -0 "$(cat /run/slurmctld.pid)" 2>/dev/null; then
    jobs=$(squeue -h -o %i 2>/dev/null || true)
    if [ -n "$jobs" ]; then
      # shellcheck disable=SC2086
      scancel --full $jobs 2>/dev/null || true
      for _ in $(seq 1 120); do
        [ -z "$(squeue -h -t running,completing -o %i 2>/dev/null)" ] && break
        sleep 0.5
      done
    fi
  fi
  for f in /run/slurmd-n1.pid /run/slurmd-n2.pid /run/slurmctld.pid /run/munge/munged.pid; do
    [ -s "$f" ] || continue
    p=$(cat "$f"); kill "$p" 2>/dev/null && while kill -0 "$p" 2>/dev/null; do sleep 0.2; done
    rm -f "$f"
  done
  rm -rf /var/spool/slurmctld/* /var/spool/slurmd/*
  # Our slurm.conf goes too: with it and no controller, every `scontrol show config`
  # (which Snakemake's Slurm plugin runs as it loads, in every snakemake command)
  # retries for 10 s.
  if grep -qsx 'ClusterName=wattzip-test' /etc/slurm/slurm.conf; then
    rm -f /etc/slurm/slurm.conf
    [ ! -e "$state/slurm.conf.before" ] || mv "$state/slurm.conf.before" /etc/slurm/slurm.conf
  fi ;;
*) echo "usage: $0 up|down" >&2; exit 2 ;;
esac
