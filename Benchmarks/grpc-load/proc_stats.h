// proc_stats.h - CPU accounting from /proc for the load generator's report.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace grpcload {

/// utime+stime of process `pid` in seconds (all its threads), from /proc/PID/stat; < 0 if unreadable.
double ProcessCpuSeconds(int pid);

/// This process's own CPU seconds (user + system, all threads), from getrusage.
double SelfCpuSeconds();

/// Busy CPU seconds of the whole machine (every CPU, irq and softirq included), from /proc/stat.
double MachineBusySeconds();

/// CPU seconds of every process except the two given, keyed by pid and sorted by pid.
std::vector<std::pair<int, double>> OtherProcessesCpu(int skip_a, int skip_b);

/// CPU seconds the processes in `after` used since `before`; a pid absent from `before` counts in full.
double CpuUsedSince(const std::vector<std::pair<int, double>>& before,
                    const std::vector<std::pair<int, double>>& after);

/// The three load averages from /proc/loadavg ("1.00 0.80 0.70"), or "" if unreadable.
std::string LoadAverage();

}  // namespace grpcload
