#!/usr/bin/env bash
# Nsight Compute figures for docs/ladder.md: every tier and cuBLAS at SIZE^3 (default 4096).
# Usage: scripts/profile_ladder.sh [SIZE] [tiers] > profile.csv
set -eu
cd "$(dirname "$0")/.."
metrics=(
  gpu__time_duration.sum
  sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active
  sm__warps_active.avg.pct_of_peak_sustained_active
  launch__registers_per_thread
  launch__occupancy_limit_registers
  l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
  l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum
  smsp__inst_executed_op_global_ld.sum
  smsp__inst_executed_op_shared_ld.sum
  smsp__inst_executed_op_shared_st.sum
  l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum
  l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
  dram__bytes_read.sum
  smsp__average_warp_latency_issue_stalled_barrier.ratio
  smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio
  smsp__average_warp_latency_issue_stalled_short_scoreboard.ratio
  smsp__average_warp_latency_issue_stalled_mio_throttle.ratio
  smsp__average_warp_latency_issue_stalled_math_pipe_throttle.ratio
  smsp__average_warp_latency_issue_stalled_not_selected.ratio
  smsp__average_warp_latency_issue_stalled_dispatch_stall.ratio
  smsp__average_warp_latency_issue_stalled_wait.ratio
  smsp__average_warp_latency_issue_stalled_selected.ratio
)
IFS=,
ncu --csv --profile-from-start off --metrics "${metrics[*]}" \
  python scripts/profile_ladder.py "${1:-4096}" ${2:+"$2"}
