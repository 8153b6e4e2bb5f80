// The embedded default node: a ringside-agent the GUI starts as its own child process on loopback,
// so that a single workstation needs no setup ("Nodes"). The GUI authorizes its own key
// with the agent and reads the agent's key itself, then connects like to any other node (CURVE).
//
// Lifetime: the agent is the GUI's child and is stopped (SIGTERM, then SIGKILL) when the
// LocalAgent is destroyed. Runs survive that: a new agent on the same state directory re-adopts
// them (docs/design.md decision 5). An agent left behind by a GUI that crashed is found through the
// pid file in the state directory and stopped before a new one starts, so two agents never share a
// journal.
#pragma once

#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <memory>

namespace ringside::gui {

struct LocalAgentOptions {
  QString agentBinary;    // empty: defaultAgentBinary()
  QString trainerBinary;  // empty: defaultTrainerBinary(); passed as --trainer when found
  QString mpirun;         // empty: the agent's default (mpirun on PATH)
  QString stateDir;       // required: e.g. <GUI data dir>/local-agent
  QString guiPublicKey;   // required: the GUI's CURVE public key, authorized with the agent
  int controlPort = 0;    // 0: any free port (read back from the agent's stderr)
  int eventsPort = 0;
  double telemetryIntervalS = 1.0;
  int commandTimeoutMs = 30000;  // authorize / print-public-key, and until the agent serves
  int stopGraceMs = 5000;        // SIGTERM -> SIGKILL when stopping the agent
  QStringList extraArguments;    // appended to the agent's command line
};

class LocalAgent : public QObject {
  Q_OBJECT

 public:
  explicit LocalAgent(LocalAgentOptions options, QObject* parent = nullptr);
  ~LocalAgent() override;  // stop()

  // ringside-agent beside the running executable, else in the build tree
  // (<exe dir>/../agent/ringside-agent), else on PATH; empty when none is found.
  static QString defaultAgentBinary();
  // ringside-trainer found the same way (<exe dir>/../trainer/ringside-trainer in the build tree).
  static QString defaultTrainerBinary();

  // Starts asynchronously: stops an agent a crashed GUI left on the state dir, runs
  // `authorize -- <gui key>` and `print-public-key`, then starts the agent with --ready-file and
  // waits for that file (AgentReady, docs/protocol.md). Ends in ready() or failed(); each step has
  // commandTimeoutMs. Calling it while starting or running does nothing. Call from the GUI thread.
  void start();

  // Stops the agent: SIGTERM, up to stopGraceMs, then SIGKILL. Blocks for at most about
  // stopGraceMs (the agent normally exits within ~100 ms). Idempotent.
  void stop();

  bool isReady() const { return ready_; }
  QString controlEndpoint() const { return controlEndpoint_; }  // tcp://127.0.0.1:PORT
  QString eventsEndpoint() const { return eventsEndpoint_; }
  QString agentPublicKey() const { return agentKey_; }
  qint64 processId() const;  // 0 when not running
  // Everything the agent wrote to stderr so far (its log), for a failure dialog.
  QString agentLog() const { return log_; }

 signals:
  // The agent serves on these loopback endpoints with this CURVE public key.
  void ready(const QString& controlEndpoint, const QString& eventsEndpoint,
             const QString& agentPublicKey);
  // Starting failed; the message says which step, with the agent's output.
  void failed(const QString& message);
  // The agent exited after it was ready, without stop() (a crash or a kill).
  void exited(int exitCode, QProcess::ExitStatus status);

 private:
  void runStep(const QStringList& arguments, void (LocalAgent::*next)(const QByteArray& out));
  void afterAuthorize(const QByteArray& out);
  void afterPrintKey(const QByteArray& out);
  void startServing();
  void onServingOutput();  // collects the agent's stderr for error messages
  void checkReadyFile();   // ready() once the agent wrote its ready file
  QString readyFile() const;
  void fail(const QString& message);
  void stopLeftover();
  QString pidFile() const;
  QProcessEnvironment environment() const;

  LocalAgentOptions options_;
  std::unique_ptr<QProcess> step_;   // authorize / print-public-key
  std::unique_ptr<QProcess> agent_;  // the serving agent
  bool starting_ = false;
  bool ready_ = false;
  bool stopping_ = false;
  QString controlEndpoint_, eventsEndpoint_, agentKey_;
  QString log_;
};

}  // namespace ringside::gui
