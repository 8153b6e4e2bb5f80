#include "ringside/gui/local_agent.h"

#include <errno.h>
#include <signal.h>
#include <unistd.h>

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QStandardPaths>
#include <QThread>
#include <QTimer>

#include "ringside/common/agent_ready.h"

namespace ringside::gui {

namespace {

// How often a starting agent's ready file is looked for.
constexpr int kReadyPollMs = 50;

constexpr int kKeyTextLength = 40;  // curve::kKeyTextLength, without pulling in libzmq here

// `name` beside the running executable, else at `buildTreePath` relative to it, else on PATH.
QString findBinary(const QString& name, const QString& buildTreePath) {
  const QString dir = QCoreApplication::applicationDirPath();
  for (const QString& candidate : {dir + QLatin1Char('/') + name, dir + buildTreePath}) {
    const QFileInfo info(candidate);
    if (info.isFile() && info.isExecutable()) return info.canonicalFilePath();
  }
  return QStandardPaths::findExecutable(name);
}

// True while `pid` runs; a zombie (exited, not yet reaped) counts as gone.
bool processAlive(pid_t pid) {
  if (pid <= 0 || (::kill(pid, 0) != 0 && errno != EPERM)) return false;
  QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
  if (!stat.open(QIODevice::ReadOnly)) return true;
  const QByteArray text = stat.readAll();
  const qsizetype end = text.lastIndexOf(')');  // the state follows "(comm) "
  return end < 0 || end + 2 >= text.size() || text.at(end + 2) != 'Z';
}

}  // namespace

LocalAgent::LocalAgent(LocalAgentOptions options, QObject* parent)
    : QObject(parent), options_(std::move(options)) {
  if (options_.agentBinary.isEmpty()) options_.agentBinary = defaultAgentBinary();
  if (options_.trainerBinary.isEmpty()) options_.trainerBinary = defaultTrainerBinary();
}

LocalAgent::~LocalAgent() { stop(); }

QString LocalAgent::defaultAgentBinary() {
  return findBinary(QStringLiteral("ringside-agent"), QStringLiteral("/../agent/ringside-agent"));
}

QString LocalAgent::defaultTrainerBinary() {
  return findBinary(QStringLiteral("ringside-trainer"),
                    QStringLiteral("/../trainer/ringside-trainer"));
}

qint64 LocalAgent::processId() const {
  return agent_ && agent_->state() != QProcess::NotRunning ? agent_->processId() : 0;
}

QString LocalAgent::pidFile() const {
  return options_.stateDir + QStringLiteral("/gui-local-agent.pid");
}

QProcessEnvironment LocalAgent::environment() const {
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  if (::geteuid() == 0) {
    // Open MPI refuses to run as root without these; a container workstation often is root.
    env.insert(QStringLiteral("OMPI_ALLOW_RUN_AS_ROOT"), QStringLiteral("1"));
    env.insert(QStringLiteral("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"), QStringLiteral("1"));
  }
  return env;
}

void LocalAgent::start() {
  if (starting_ || ready_) return;
  if (options_.agentBinary.isEmpty() || !QFileInfo(options_.agentBinary).isExecutable()) {
    fail(tr("ringside-agent not found (looked beside %1, in its build tree and on PATH): install "
            "ringside-agent or add a node by address")
             .arg(QCoreApplication::applicationDirPath()));
    return;
  }
  if (options_.stateDir.isEmpty() || options_.guiPublicKey.size() != kKeyTextLength) {
    fail(tr("local agent: a state directory and the GUI's public key (40 characters) are needed"));
    return;
  }
  // The agent creates its state directory itself, mode 0700 (its journal, keys and run logs are
  // private); it refuses to use one that others can write. Only the parent is made here.
  if (!QDir().mkpath(QFileInfo(options_.stateDir).absolutePath())) {
    fail(tr("cannot create the local agent's state directory %1").arg(options_.stateDir));
    return;
  }
  starting_ = true;
  stopping_ = false;
  log_.clear();
  stopLeftover();
  runStep({QStringLiteral("authorize"), QStringLiteral("--"), options_.guiPublicKey},
          &LocalAgent::afterAuthorize);
}

// An agent started by an earlier GUI session that crashed is still serving this state dir: stop
// it, since two agents must not share one journal. Only a process whose command line names
// ringside-agent and this state dir is touched.
void LocalAgent::stopLeftover() {
  QFile file(pidFile());
  if (!file.open(QIODevice::ReadOnly)) return;
  const pid_t pid = static_cast<pid_t>(file.readAll().trimmed().toLongLong());
  file.close();
  QFile cmdline(QStringLiteral("/proc/%1/cmdline").arg(pid));
  if (pid <= 0 || !cmdline.open(QIODevice::ReadOnly)) return;
  const QList<QByteArray> argv = cmdline.readAll().split('\0');
  const bool isOurs = !argv.isEmpty() && argv.first().endsWith("ringside-agent") &&
                      argv.contains(QFile::encodeName(options_.stateDir));
  if (!isOurs) return;
  ::kill(pid, SIGTERM);
  QDeadlineTimer deadline(options_.stopGraceMs);
  while (processAlive(pid) && !deadline.hasExpired()) QThread::msleep(20);
  if (processAlive(pid)) ::kill(pid, SIGKILL);
  QFile::remove(pidFile());
}

void LocalAgent::runStep(const QStringList& arguments,
                         void (LocalAgent::*next)(const QByteArray& out)) {
  if (step_) {
    step_->disconnect(this);
    step_.release()->deleteLater();  // we may be inside its finished() signal
  }
  step_ = std::make_unique<QProcess>();
  step_->setProcessEnvironment(environment());
  QProcess* process = step_.get();
  const QString what = arguments.first();
  auto* timer = new QTimer(process);
  timer->setSingleShot(true);
  connect(timer, &QTimer::timeout, this, [this, process, what] {
    process->disconnect(this);
    process->kill();
    fail(tr("ringside-agent %1 did not finish within %2 s")
             .arg(what)
             .arg(options_.commandTimeoutMs / 1000));
  });
  connect(
      process, &QProcess::finished, this,
      [this, process, timer, what, next](int exitCode, QProcess::ExitStatus status) {
        timer->stop();  // the step is over: its time-out must not fire later
        const QByteArray out = process->readAllStandardOutput();
        const QString err = QString::fromLocal8Bit(process->readAllStandardError()).trimmed();
        if (status != QProcess::NormalExit || exitCode != 0) {
          fail(tr("ringside-agent %1 failed (exit code %2): %3").arg(what).arg(exitCode).arg(err));
          return;
        }
        (this->*next)(out);
      });
  connect(process, &QProcess::errorOccurred, this, [this, process, what](QProcess::ProcessError e) {
    if (e != QProcess::FailedToStart) return;
    process->disconnect(this);
    fail(tr("cannot run %1 (%2): %3").arg(options_.agentBinary, what, process->errorString()));
  });
  QStringList args{QStringLiteral("--state-dir"), options_.stateDir};
  args += arguments;
  timer->start(options_.commandTimeoutMs);
  process->start(options_.agentBinary, args);
}

void LocalAgent::afterAuthorize(const QByteArray& /*out*/) {
  runStep({QStringLiteral("print-public-key")}, &LocalAgent::afterPrintKey);
}

void LocalAgent::afterPrintKey(const QByteArray& out) {
  const QString key = QString::fromLatin1(out).trimmed();
  if (key.size() != kKeyTextLength) {
    fail(tr("ringside-agent print-public-key printed no key: \"%1\"").arg(key));
    return;
  }
  agentKey_ = key;
  startServing();
}

void LocalAgent::startServing() {
  agent_ = std::make_unique<QProcess>();
  agent_->setProcessEnvironment(environment());
  QStringList args{QStringLiteral("--state-dir"),
                   options_.stateDir,
                   QStringLiteral("--listen"),
                   QStringLiteral("127.0.0.1"),
                   QStringLiteral("--control-port"),
                   QString::number(options_.controlPort),
                   QStringLiteral("--events-port"),
                   QString::number(options_.eventsPort),
                   QStringLiteral("--telemetry-interval"),
                   QString::number(options_.telemetryIntervalS)};
  if (!options_.trainerBinary.isEmpty()) {
    args << QStringLiteral("--trainer") << options_.trainerBinary;
  }
  if (!options_.mpirun.isEmpty()) args << QStringLiteral("--mpirun") << options_.mpirun;
  // Readiness comes from the ready file (AgentReady, docs/protocol.md), not from the log.
  QFile::remove(readyFile());
  args << QStringLiteral("--ready-file") << readyFile();
  args += options_.extraArguments;
  QProcess* process = agent_.get();
  connect(process, &QProcess::readyReadStandardError, this, &LocalAgent::onServingOutput);
  auto* readyPoll = new QTimer(process);
  connect(readyPoll, &QTimer::timeout, this, &LocalAgent::checkReadyFile);
  readyPoll->start(kReadyPollMs);
  // stdout is not used by the serving agent; drop it so the pipe never fills.
  process->setStandardOutputFile(QProcess::nullDevice());
  auto* timer = new QTimer(process);
  timer->setObjectName(QStringLiteral("startTimeout"));
  timer->setSingleShot(true);
  connect(timer, &QTimer::timeout, this, [this] {
    if (!ready_) {
      fail(tr("the local agent did not start serving within %1 s:\n%2")
               .arg(options_.commandTimeoutMs / 1000)
               .arg(log_));
    }
  });
  connect(process, &QProcess::finished, this, [this](int exitCode, QProcess::ExitStatus status) {
    onServingOutput();
    QFile::remove(pidFile());
    if (stopping_) return;
    if (!ready_) {
      fail(tr("the local agent exited (code %1) before serving:\n%2").arg(exitCode).arg(log_));
      return;
    }
    ready_ = false;
    emit exited(exitCode, status);
  });
  connect(process, &QProcess::errorOccurred, this, [this, process](QProcess::ProcessError e) {
    if (e == QProcess::FailedToStart) {
      fail(tr("cannot run %1: %2").arg(options_.agentBinary, process->errorString()));
    }
  });
  connect(process, &QProcess::started, this, [this, process] {
    QFile file(pidFile());
    if (file.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
      file.write(QByteArray::number(process->processId()) + '\n');
    }
  });
  timer->start(options_.commandTimeoutMs);
  process->start(options_.agentBinary, args);
}

void LocalAgent::onServingOutput() {
  if (!agent_) return;
  log_ += QString::fromLocal8Bit(agent_->readAllStandardError());
}

QString LocalAgent::readyFile() const {
  return options_.stateDir + QStringLiteral("/gui-local-agent.ready.json");
}

void LocalAgent::checkReadyFile() {
  if (!agent_ || ready_ || !starting_) return;
  const Result<v1::AgentReady> file = readAgentReady(readyFile().toStdString());
  if (!file.isOk()) {
    if (file.status().code() != Status::Code::kNotFound) {
      fail(QString::fromStdString(file.status().message()));
    }
    return;
  }
  if (QString::fromStdString(file->public_key()) != agentKey_) {
    fail(tr("the local agent's ready file names the key %1, not the agent's key %2")
             .arg(QString::fromStdString(file->public_key()), agentKey_));
    return;
  }
  controlEndpoint_ = QString::fromStdString(file->control_endpoint());
  eventsEndpoint_ = QString::fromStdString(file->events_endpoint());
  starting_ = false;
  ready_ = true;
  if (auto* timer = agent_->findChild<QTimer*>(QStringLiteral("startTimeout"))) timer->stop();
  emit ready(controlEndpoint_, eventsEndpoint_, agentKey_);
}

void LocalAgent::fail(const QString& message) {
  stop();
  emit failed(message);
}

void LocalAgent::stop() {
  if (stopping_) return;
  stopping_ = true;
  ready_ = false;
  starting_ = false;
  if (step_) {
    step_->disconnect(this);
    if (step_->state() != QProcess::NotRunning) {
      step_->kill();
      step_->waitForFinished(1000);
    }
    // Possibly called from one of its own signals: delete it later, not now.
    step_.release()->deleteLater();
  }
  if (agent_) {
    agent_->disconnect(this);
    if (agent_->state() != QProcess::NotRunning) {
      agent_->terminate();  // SIGTERM: the agent closes its sockets; runs go on (re-adopted later)
      if (!agent_->waitForFinished(options_.stopGraceMs)) {
        agent_->kill();
        agent_->waitForFinished(1000);
      }
    }
    agent_.release()->deleteLater();
    QFile::remove(pidFile());
  }
}

}  // namespace ringside::gui
