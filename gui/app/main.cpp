// ringside: the desktop GUI. See MainWindow (the window) and Controller (the logic).
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QLibraryInfo>
#include <QLocale>
#include <QMessageBox>
#include <QStandardPaths>
#include <QTextStream>
#include <QTimer>
#include <QTranslator>
#include <memory>
#include <utility>

#include "main_window.h"
#include "ringside/gui/controller.h"
#include "ringside/gui/local_cluster.h"
#include "ringside/gui/widgets/wheel_guard.h"

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setApplicationName(QStringLiteral("ringside"));
  QApplication::setApplicationDisplayName(QStringLiteral("Ringside"));
  QApplication::setOrganizationName(QStringLiteral("ringside"));
  QApplication::setApplicationVersion(QStringLiteral("0.1.0"));
  // The wheel changes a value only in the spin box or combo box that has focus.
  app.installEventFilter(new ringside::gui::WheelGuard(&app));

  QCommandLineParser parser;
  parser.setApplicationDescription(
      QApplication::translate("main", "Orchestrate and monitor data-parallel training."));
  parser.addHelpOption();
  parser.addVersionOption();
  QCommandLineOption dataDir(
      QStringLiteral("data-dir"),
      QApplication::translate("main", "Directory for the run database, keys and the local agent."),
      QApplication::translate("main", "dir"),
      QStandardPaths::writableLocation(QStandardPaths::AppDataLocation));
  QCommandLineOption lang(
      QStringLiteral("lang"),
      QApplication::translate("main", "User-interface language, e.g. de or en."),
      QApplication::translate("main", "code"));
  QCommandLineOption launch(QStringLiteral("launch"),
                            QApplication::translate("main",
                                                    "Launch the run in the setup form as "
                                                    "soon as a node is online (with "
                                                    "--local-cluster: on every node of the "
                                                    "cluster, once all are online)."));
  QCommandLineOption noLocalAgent(
      QStringLiteral("no-local-agent"),
      QApplication::translate("main", "Do not start the embedded local agent."));
  QCommandLineOption screenshots(
      QStringLiteral("screenshots"),
      QApplication::translate("main",
                              "Launch two short runs, save every main view as PNG in "
                              "<dir>, and quit (scripts/screenshots). With --local-cluster: "
                              "one run on every node of the cluster, its live dashboard and "
                              "the nodes."),
      QApplication::translate("main", "dir"));
  QCommandLineOption smokeTest(
      QStringLiteral("smoke-test"),
      QApplication::translate("main",
                              "Start as usual (run database, window, local agent), then quit: "
                              "exit status 0 once every part works, 1 with the reason when one "
                              "fails or the local agent (with --local-cluster: every node of the "
                              "cluster) is not online within 30 s."));
  QCommandLineOption localCluster(
      QStringLiteral("local-cluster"),
      QApplication::translate(
          "main",
          "Add (or update) the nodes of the cluster that `scripts/local-cluster "
          "up N` made, read from FILE (default %1), and connect to them with "
          "the cluster's client key.")
          .arg(QString::fromLatin1(ringside::gui::kDefaultLocalClusterFile)));
  parser.addOptions({dataDir, lang, launch, noLocalAgent, screenshots, smokeTest, localCluster});
  parser.addPositionalArgument(
      QStringLiteral("FILE"),
      QApplication::translate("main", "With --local-cluster: the cluster's JSON file."),
      QStringLiteral("[FILE]"));
  parser.process(app);
  // Only --local-cluster takes an argument.
  if (parser.positionalArguments().size() > (parser.isSet(localCluster) ? 1 : 0)) {
    QTextStream(stderr) << QApplication::translate("main",
                                                   "ringside: unexpected argument %1 (see --help)")
                               .arg(parser.positionalArguments().constLast())
                        << '\n';
    return 2;
  }

  const QLocale locale = parser.isSet(lang) ? QLocale(parser.value(lang)) : QLocale::system();
  QLocale::setDefault(locale);
  QTranslator qtTranslator, appTranslator;
  if (qtTranslator.load(locale, QStringLiteral("qtbase"), QStringLiteral("_"),
                        QLibraryInfo::path(QLibraryInfo::TranslationsPath))) {
    QApplication::installTranslator(&qtTranslator);
  }
  if (appTranslator.load(locale, QStringLiteral("ringside"), QStringLiteral("_"),
                         QStringLiteral(":/i18n"))) {
    QApplication::installTranslator(&appTranslator);
  }

  ringside::gui::ControllerOptions options;
  options.dataDir = parser.value(dataDir);
  options.startLocalAgent = !parser.isSet(noLocalAgent);
  if (parser.isSet(localCluster)) {
    const QString file = parser.positionalArguments().value(
        0, QString::fromLatin1(ringside::gui::kDefaultLocalClusterFile));
    auto cluster = ringside::gui::readLocalCluster(file);
    ringside::Status status = cluster.isOk() ? ringside::Status::ok() : cluster.status();
    if (status.isOk()) status = ringside::gui::localClusterClientKeys(*cluster).status();
    if (!status.isOk()) {
      QTextStream(stderr) << "ringside --local-cluster: " << status.message().c_str() << '\n';
      if (!parser.isSet(smokeTest)) {
        QMessageBox::critical(nullptr, QApplication::translate("main", "Ringside cannot start"),
                              QString::fromStdString(status.message()));
      }
      return 1;
    }
    options.localCluster = *cluster;
  }
  ringside::gui::Controller controller(options);
  // start() returns at once; the store opens on its thread. Before the window: its panels query
  // the store, and the store runs those queries after the open.
  if (const ringside::Status status = controller.start(); !status.isOk()) {
    if (parser.isSet(smokeTest)) {
      QTextStream(stderr) << "ringside --smoke-test: " << status.message().c_str() << '\n';
      return 1;
    }
    QMessageBox::critical(nullptr, QApplication::translate("main", "Ringside cannot start"),
                          QString::fromStdString(status.message()));
    return 1;
  }
  ringside::gui::MainWindow window(controller);
  if (!parser.isSet(smokeTest)) {
    QObject::connect(&controller, &ringside::gui::Controller::startFailed, &window,
                     [&window](const QString& message) {
                       QMessageBox::critical(
                           &window, QApplication::translate("main", "Ringside cannot start"),
                           message);
                       QApplication::exit(1);
                     });
  }
  window.show();
  // With --local-cluster, --launch (and the screenshot tour) place the run on every node of it.
  QStringList clusterNodeNames;
  if (options.localCluster) {
    for (const auto& node : options.localCluster->nodes) clusterNodeNames.append(node.name);
  }
  if (parser.isSet(launch)) window.launchWhenReady(clusterNodeNames);
  if (parser.isSet(smokeTest)) {
    // Checks what a packaged install needs at run time: the SQLite driver (the run database),
    // the platform and SVG plug-ins (the window and its icons) and ringside-agent (the local
    // agent). The outcome is one line on stdout or stderr and the exit status.
    auto finish = [finished = std::make_shared<bool>(false)](int status, const QString& message) {
      if (std::exchange(*finished, true)) return;  // the first outcome decides
      QTextStream(status == 0 ? stdout : stderr) << "ringside --smoke-test: " << message << '\n';
      QApplication::exit(status);
    };
    // With --local-cluster no local agent starts on a fresh database: every node of the cluster
    // must come online instead.
    const QStringList clusterNodes = clusterNodeNames;
    auto check = [&controller, finish, withAgent = options.startLocalAgent, clusterNodes] {
      if (!controller.isStarted()) return;
      if (!clusterNodes.isEmpty()) {
        QStringList online;
        for (const ringside::gui::NodeView& node : controller.nodes()) {
          if (clusterNodes.contains(node.record.name) && node.info &&
              node.state == ringside::gui::NodeState::Online) {
            online.append(node.record.name);
          }
        }
        if (online.size() < clusterNodes.size()) return;
        return finish(0, QStringLiteral("started; local cluster nodes %1 online")
                             .arg(clusterNodes.join(QStringLiteral(", "))));
      }
      if (!withAgent) return finish(0, QStringLiteral("started (no local agent)"));
      for (const ringside::gui::NodeView& node : controller.nodes()) {
        if (node.local && node.state == ringside::gui::NodeState::Online) {
          return finish(0, QStringLiteral("started; local agent %1 online")
                               .arg(node.info ? QString::fromStdString(node.info->hostname())
                                              : node.record.name));
        }
      }
    };
    QObject::connect(&controller, &ringside::gui::Controller::started, &app, check);
    QObject::connect(&controller, &ringside::gui::Controller::nodesChanged, &app, check);
    QObject::connect(&controller, &ringside::gui::Controller::startFailed, &app,
                     [finish](const QString& message) { finish(1, message); });
    QObject::connect(&controller, &ringside::gui::Controller::errorMessage, &app,
                     [finish](const QString& message) { finish(1, message); });
    QTimer::singleShot(30000, &app, [finish, cluster = !clusterNodes.isEmpty()] {
      finish(1, cluster ? QStringLiteral("not every local cluster node was online within 30 s: "
                                         "check `scripts/local-cluster status`")
                        : QStringLiteral("the local agent was not online within 30 s"));
    });
  }
  if (parser.isSet(screenshots)) {
    QDir().mkpath(parser.value(screenshots));
    if (clusterNodeNames.isEmpty()) {
      window.runScreenshotTour(parser.value(screenshots));
    } else {
      window.runClusterScreenshotTour(parser.value(screenshots), clusterNodeNames);
    }
  }
  return QApplication::exec();
}
