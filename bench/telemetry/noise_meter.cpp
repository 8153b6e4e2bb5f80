#include "noise_meter.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

namespace ringside::bench {

namespace {

// The machine's CPU times in /proc/stat's first line (all CPUs), in clock ticks; all 0 when it
// cannot be read.
struct CpuTimes {
  uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
};

CpuTimes machineCpuTimes() {
  std::ifstream stat("/proc/stat");
  std::string cpu;
  CpuTimes t;
  stat >> cpu >> t.user >> t.nice >> t.system >> t.idle >> t.iowait >> t.irq >> t.softirq >>
      t.steal;
  return stat ? t : CpuTimes{};
}

double ticksToSeconds(uint64_t ticks) {
  return static_cast<double>(ticks) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

}  // namespace

double machineBusySeconds() {
  const CpuTimes t = machineCpuTimes();
  return ticksToSeconds(t.user + t.nice + t.system + t.irq + t.softirq + t.steal);
}

double machineStealSeconds() { return ticksToSeconds(machineCpuTimes().steal); }

// User + system CPU seconds of process `pid` ("self" for this one), all its threads; 0 when gone.
double processCpuSeconds(const std::string& pid) {
  std::ifstream in("/proc/" + pid + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t comm = text.rfind(')');  // the command name may hold spaces
  if (comm == std::string::npos) return 0;
  std::istringstream fields(text.substr(comm + 2));
  std::string field;
  uint64_t utime = 0, stime = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {  // fields 14 and 15: utime, stime
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

NoiseMeter::NoiseMeter(std::string agentPid) : agentPid_(std::move(agentPid)) {
  start_ = Clock::now();
  busy_ = machineBusySeconds();
  own_ = ownSeconds();
}

std::pair<double, double> NoiseMeter::otherCpu() const {
  const double other = std::max(0.0, machineBusySeconds() - busy_ - (ownSeconds() - own_));
  const double capacity =
      secondsSince(start_) * static_cast<double>(std::max(1u, std::thread::hardware_concurrency()));
  return {other, capacity > 0 ? 100.0 * other / capacity : 0.0};
}

double NoiseMeter::ownSeconds() const {
  return processCpuSeconds("self") + (agentPid_.empty() ? 0.0 : processCpuSeconds(agentPid_));
}

}  // namespace ringside::bench
