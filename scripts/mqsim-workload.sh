#!/usr/bin/env bash
# Print an MQSim workload file (workload.xml) that replays TRACE: one trace-based flow
# over every channel, chip, die and plane of MQSim's default ssdconfig.xml, with the
# sample workload's write-cache mode and Initial_Occupancy_Percentage 70.
# TRACE must be in MQSim's ASCII layout (time_ns device start_sector sectors type,
# 1 = read), which ../shared/bench/gen_trace.py and `lamina trace gen` write.
#
#   scripts/mqsim-workload.sh TRACE > workload.xml
#
# Used by scripts/mqsim-compare.sh and scripts/bench-e2e.sh (case vs-mqsim).
set -euo pipefail
trace=${1:?usage: mqsim-workload.sh TRACE}
cat <<XML
<?xml version="1.0" encoding="us-ascii"?>
<MQSim_IO_Scenarios>
  <IO_Scenario>
    <IO_Flow_Parameter_Set_Trace_Based>
      <Priority_Class>HIGH</Priority_Class>
      <Device_Level_Data_Caching_Mode>WRITE_CACHE</Device_Level_Data_Caching_Mode>
      <Channel_IDs>0,1,2,3,4,5,6,7</Channel_IDs>
      <Chip_IDs>0,1,2,3</Chip_IDs>
      <Die_IDs>0,1</Die_IDs>
      <Plane_IDs>0,1</Plane_IDs>
      <Initial_Occupancy_Percentage>70</Initial_Occupancy_Percentage>
      <File_Path>$trace</File_Path>
      <Percentage_To_Be_Executed>100</Percentage_To_Be_Executed>
      <Relay_Count>1</Relay_Count>
      <Time_Unit>NANOSECOND</Time_Unit>
    </IO_Flow_Parameter_Set_Trace_Based>
  </IO_Scenario>
</MQSim_IO_Scenarios>
XML
