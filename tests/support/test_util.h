// Helpers shared by the trainer, agent and other tests: temporary directories and child
// processes. (In namespace ringside::trainer, where they began.)
#pragma once

#include <string>
#include <vector>

namespace ringside::trainer {

// A fresh directory under $TMPDIR (or /tmp), removed with its contents on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

struct ProcessResult {
  int exitCode = -1;  // exit status, or 128 + signal when killed
  bool timedOut = false;
  std::string out;  // stdout
  std::string err;  // stderr
};

// A child process with stdout and stderr captured to files in `workDir`.
class ChildProcess {
 public:
  // Starts argv[0] (looked up in PATH) with `argv`. `env` entries "NAME=value" are added.
  ChildProcess(const std::vector<std::string>& argv, const std::string& workDir,
               const std::vector<std::string>& env = {});
  ~ChildProcess();
  int pid() const { return pid_; }
  // Sends `signal` to the child's process group (the child leads its own group).
  void signalGroup(int signal) const;
  // Waits until the child exits, at most `timeoutSeconds`; on time-out kills the group.
  ProcessResult wait(double timeoutSeconds);
  // The stdout written so far.
  std::string outputSoFar() const;
  // The stderr written so far.
  std::string errorSoFar() const;

 private:
  int pid_ = -1;
  std::string outPath_;
  std::string errPath_;
  bool reaped_ = false;
};

// Runs a command to completion (or `timeoutSeconds`), capturing its output.
ProcessResult runProcess(const std::vector<std::string>& argv, const std::string& workDir,
                         double timeoutSeconds, const std::vector<std::string>& env = {});

}  // namespace ringside::trainer
