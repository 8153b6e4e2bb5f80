#include "noise_meter.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

namespace ringside::bench {

double machineBusySeconds() {
  std::ifstream stat("/proc/stat");
  std::string cpu;
  uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  stat >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal;
  return static_cast<double>(user + nice + system + irq + softirq + steal) /
         static_cast<double>(::sysconf(_SC_CLK_TCK));
}

double machineStealSeconds() {
  std::ifstream stat("/proc/stat");
  std::string cpu;
  uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  stat >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal;
  return static_cast<double>(steal) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

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
