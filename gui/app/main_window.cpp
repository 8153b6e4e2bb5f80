#include "main_window.h"

#include <QTextStream>

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QKeySequence>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QScreen>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QTabBar>
#include <QTabWidget>
#include <QTimer>

#include <algorithm>
#include <cmath>

#include "ringside/gui/controller.h"
#include "ringside/gui/sweep_book.h"
#include "ringside/gui/widgets/compare_view.h"
#include "ringside/gui/widgets/dashboard_tab.h"
#include "ringside/gui/widgets/history_panel.h"
#include "ringside/gui/widgets/metric_chart.h"
#include "ringside/gui/widgets/nodes_panel.h"
#include "ringside/gui/widgets/run_setup_panel.h"
#include "ringside/gui/run_notifier.h"
#include "ringside/gui/widgets/queue_panel.h"
#include "ringside/gui/widgets/sweeps_panel.h"

namespace ringside::gui {

namespace {
constexpr int kFixedTabs = 5;  // nodes, new run, history, sweeps, queue: never closed
constexpr int kQueueTab = 4;
}

MainWindow::MainWindow(Controller& controller, QWidget* parent)
    : QMainWindow(parent), controller_(controller) {
  setWindowTitle(tr("Ringside"));
  setWindowIcon(QIcon(QStringLiteral(":/icons/ringside.svg")));
  tabs_ = new QTabWidget;
  tabs_->setDocumentMode(true);
  tabs_->setTabsClosable(true);
  tabs_->setMovable(true);
  nodes_ = new NodesPanel(controller_);
  setup_ = new RunSetupPanel;
  history_ = new HistoryPanel(controller_);
  sweepBook_ = new SweepBook(&controller_, this);
  sweeps_ = new SweepsPanel(controller_, *sweepBook_);
  tabs_->addTab(nodes_, QIcon(QStringLiteral(":/icons/nodes.svg")), tr("Nodes"));
  tabs_->addTab(setup_, QIcon(QStringLiteral(":/icons/new-run.svg")), tr("New run"));
  tabs_->addTab(history_, QIcon(QStringLiteral(":/icons/history.svg")), tr("History"));
  tabs_->addTab(sweeps_, QIcon(QStringLiteral(":/icons/sweeps.svg")), tr("Sweeps"));
  queue_ = new QueuePanel(controller_);
  tabs_->insertTab(kQueueTab, queue_, QIcon(QStringLiteral(":/icons/queue.svg")), tr("Queue"));
  for (int i = 0; i < kFixedTabs; ++i) {
    tabs_->tabBar()->setTabButton(i, QTabBar::RightSide, nullptr);
    tabs_->tabBar()->setTabButton(i, QTabBar::LeftSide, nullptr);
  }
  setCentralWidget(tabs_);
  status_ = new QLabel;
  statusBar()->addPermanentWidget(status_);
  // Desktop notifications of this GUI's runs (docs/queue.md, "Notifications"); on by default.
  auto* desktop = new FreedesktopNotifications(QDBusConnection::sessionBus(), this);
  notifier_ = new RunNotifier(
      controller_, [desktop](const RunNotification& n) { desktop->show(n); }, this);
  notifier_->setEnabled(QSettings().value(QStringLiteral("notifications/enabled"), true).toBool());
  connect(desktop, &FreedesktopNotifications::unavailable, this,
          [this](const QString& message) { statusBar()->showMessage(message, 15000); });
  connect(notifier_, &RunNotifier::errorMessage, this,
          [this](const QString& message) { statusBar()->showMessage(message, 15000); });
  buildActions();

  connect(tabs_, &QTabWidget::tabCloseRequested, this, [this](int index) {
    if (index < kFixedTabs) return;
    QWidget* page = tabs_->widget(index);
    tabs_->removeTab(index);
    page->deleteLater();
  });
  connect(setup_, &RunSetupPanel::launchRequested, this,
          [this](const RunForm& form) { controller_.launch(form); });
  connect(&controller_, &Controller::runLaunched, this, [this](const QString& runId) {
    const QString queued = controller_.queuedText(runId);
    statusBar()->showMessage(queued.isEmpty() ? tr("Launched run %1").arg(runId)
                                              : tr("Run %1: %2").arg(runId, queued),
                             queued.isEmpty() ? 5000 : 15000);
    openRun(runId);
  });
  connect(&controller_, &Controller::launchFailed, this, [this](const QString& message) {
    statusBar()->clearMessage();
    if (!launchMode_.isEmpty()) {
      // Nobody to click a dialog away: say why on stderr and end at once.
      QTextStream(stderr) << "ringside " << launchMode_ << ": the launch failed: " << message
                          << '\n';
      QTimer::singleShot(0, qApp, [] { QApplication::exit(1); });
      return;
    }
    QMessageBox::warning(this, tr("Launch failed"), message);
  });
  connect(&controller_, &Controller::preflightStarted, this, [this](const QStringList& names) {
    statusBar()->showMessage(
        tr("Checking %1 before the launch…").arg(names.join(QStringLiteral(", "))), 15000);
  });
  connect(&controller_, &Controller::errorMessage, this,
          [this](const QString& message) { statusBar()->showMessage(message, 10000); });
  connect(&controller_, &Controller::nodesChanged, this, &MainWindow::refreshNodeChoices);
  // The controller opens the run database in the background (Controller::start()); main()
  // handles startFailed.
  if (!controller_.isStarted()) statusBar()->showMessage(tr("Opening the run database…"));
  connect(&controller_, &Controller::started, this, [this] { statusBar()->clearMessage(); });
  connect(history_, &HistoryPanel::openRunRequested, this, &MainWindow::openRun);
  connect(history_, &HistoryPanel::cloneRequested, this, &MainWindow::clone);
  connect(history_, &HistoryPanel::compareRequested, this, &MainWindow::compare);
  connect(sweeps_, &SweepsPanel::openRunRequested, this, &MainWindow::openRun);
  connect(sweeps_, &SweepsPanel::compareRequested, this, &MainWindow::compare);
  connect(sweeps_, &SweepsPanel::errorMessage, this,
          [this](const QString& message) { statusBar()->showMessage(message, 15000); });
  connect(queue_, &QueuePanel::openRunRequested, this, &MainWindow::openRun);
  connect(queue_, &QueuePanel::errorMessage, this,
          [this](const QString& message) { statusBar()->showMessage(message, 15000); });
  connect(queue_, &QueuePanel::queuedCountChanged, this, [this](int count) {
    const int at = tabs_->indexOf(queue_);
    if (at >= 0) tabs_->setTabText(at, count > 0 ? tr("Queue (%1)").arg(count) : tr("Queue"));
  });
  // Free slots and heartbeat ages change with telemetry: refresh the choices now and then.
  auto* refresh = new QTimer(this);
  connect(refresh, &QTimer::timeout, this, &MainWindow::refreshNodeChoices);
  refresh->start(2000);

  QSettings settings;
  restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
  restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
  showPage(settings.value(QStringLiteral("window/page"), 1).toInt());
  if (!settings.contains(QStringLiteral("window/geometry"))) resize(1280, 860);
  refreshNodeChoices();
}

void MainWindow::buildActions() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
  quit->setShortcut(QKeySequence::Quit);
  QMenu* view = menuBar()->addMenu(tr("&View"));
  const QString names[kFixedTabs] = {tr("&Nodes"), tr("New &run"), tr("&History"),
                                     tr("S&weeps"), tr("&Queue")};
  for (int i = 0; i < kFixedTabs; ++i) {
    QAction* action = view->addAction(names[i], this, [this, i] { showPage(i); });
    action->setShortcut(QKeySequence(Qt::CTRL | static_cast<Qt::Key>(Qt::Key_1 + i)));
  }
  view->addSeparator();
  QAction* close = view->addAction(tr("&Close tab"), this, [this] {
    const int index = tabs_->currentIndex();
    if (index >= kFixedTabs) emit tabs_->tabCloseRequested(index);
  });
  close->setShortcut(QKeySequence::Close);
  QAction* next = view->addAction(tr("Ne&xt tab"), this, [this] {
    tabs_->setCurrentIndex((tabs_->currentIndex() + 1) % tabs_->count());
  });
  next->setShortcut(QKeySequence::NextChild);
  QMenu* settings = menuBar()->addMenu(tr("&Settings"));
  QAction* notify = settings->addAction(tr("&Desktop notifications"));
  notify->setCheckable(true);
  notify->setChecked(notifier_->enabled());
  notify->setToolTip(tr("Tell the desktop when a run launched here starts after waiting in a "
                        "queue, completes or fails"));
  connect(notify, &QAction::toggled, this, [this](bool on) {
    notifier_->setEnabled(on);
    QSettings().setValue(QStringLiteral("notifications/enabled"), on);
  });
  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&About Ringside"), this, [this] {
    QMessageBox::about(
        this, tr("About Ringside"),
        tr("<b>Ringside</b> %1<br>Orchestrate and monitor data-parallel training.<br>"
           "Your public key (for agents' allowlists):<br><tt>%2</tt>")
            .arg(QApplication::applicationVersion(), controller_.guiPublicKey().toHtmlEscaped()));
  });
}

void MainWindow::showPage(int index) {
  tabs_->setCurrentIndex(std::clamp(index, 0, tabs_->count() - 1));
}

void MainWindow::refreshNodeChoices() {
  const QList<NodeChoice> choices = controller_.nodeChoices();
  int online = 0;
  for (const NodeChoice& choice : choices) online += choice.online;
  setup_->setNodes(choices);
  status_->setText(tr("%Ln node(s) online", nullptr, online) +
                   QStringLiteral(" / %L1").arg(choices.size()));
  if (!launchPending_ || online == 0) return;
  if (!launchNodes_.isEmpty()) {
    const QStringList ids = onlineNodeIds(launchNodes_);
    if (ids.isEmpty()) return;
    RunForm form = setup_->form();
    form.nodeIds = ids;
    // The default global batch (a power of two) need not divide among 3 nodes' ranks: take the
    // nearest multiple of the world size, and say so.
    const int world = form.worldSize();
    if (form.job == RunForm::Job::kTrainer && form.globalBatch % world != 0) {
      const qint64 batch = std::max<qint64>(
          world, std::llround(static_cast<double>(form.globalBatch) / world) * world);
      statusBar()->showMessage(
          tr("Global batch %1 instead of %2: a multiple of the %3 ranks on %4 nodes")
              .arg(batch)
              .arg(form.globalBatch)
              .arg(world)
              .arg(ids.size()));
      form.globalBatch = batch;
    }
    setup_->setForm(form);
  }
  if (quitIfFormRefuses(QStringLiteral("--launch"))) {
    launchPending_ = false;
    return;
  }
  if (setup_->canLaunch()) {
    launchPending_ = false;
    controller_.launch(setup_->form());
  }
}

bool MainWindow::quitIfFormRefuses(const QString& mode) {
  const QHash<QString, QString> errors = setup_->fieldErrors();
  if (errors.isEmpty()) return false;
  QStringList fields = errors.keys();
  fields.sort();
  QTextStream err(stderr);
  err << "ringside " << mode << ": the run setup form refuses the run, so nothing was launched:\n";
  for (const QString& field : fields) err << "  " << field << ": " << errors.value(field) << '\n';
  err.flush();
  QTimer::singleShot(0, qApp, [] { QApplication::exit(2); });
  return true;
}

QStringList MainWindow::onlineNodeIds(const QStringList& nodeNames) const {
  QStringList ids;
  for (const QString& name : nodeNames) {
    for (const NodeView& node : controller_.nodes()) {
      if (node.record.name == name && node.state == NodeState::Online && node.info) {
        ids.append(node.record.nodeId);
      }
    }
  }
  return ids.size() == nodeNames.size() ? ids : QStringList();
}

void MainWindow::launchWhenReady(const QStringList& nodeNames) {
  if (launchMode_.isEmpty()) launchMode_ = QStringLiteral("--launch");
  launchPending_ = true;
  launchNodes_ = nodeNames;
  refreshNodeChoices();
}

void MainWindow::runClusterScreenshotTour(const QString& dir, const QStringList& nodeNames) {
  launchMode_ = QStringLiteral("--screenshots");
  auto save = [this, dir](const QString& name) { saveScreenshot(dir, name); };
  auto* deadline = new QTimer(this);
  deadline->setSingleShot(true);
  connect(deadline, &QTimer::timeout, this, [] {
    qWarning(
        "cluster screenshot tour: no run ended within 3 minutes (not every node online, "
        "or the run setup form refused the run)");
    QApplication::exit(1);
  });
  deadline->start(180000);
  resize(1440, 960);
  connect(&controller_, &Controller::runLaunched, this, [this, save](const QString& runId) {
    tourRuns_ << runId;
    openRun(runId);
    // Live: a while after the start, every rank has reported and the charts have a history.
    QTimer::singleShot(25000, this, [this, save, runId] {
      // Room for every rank's row in the per-rank view.
      if (auto* splitter = tabs_->currentWidget()->findChild<QSplitter*>()) {
        splitter->setSizes({560, 330});
      }
      save(QStringLiteral("cluster-dashboard"));
      showPage(0);
      QTimer::singleShot(1500, this, [this, save, runId] {
        save(QStringLiteral("cluster-nodes"));
        controller_.stopRun(runId);
      });
    });
  });
  connect(&controller_, &Controller::runStateChanged, this,
          [this](const QString& runId, v1::RunState state) {
            if (!tourRuns_.contains(runId)) return;
            if (state == v1::STOPPED || state == v1::FAILED || state == v1::COMPLETED) {
              QTimer::singleShot(500, qApp, [] { QApplication::exit(0); });
            }
          });
  launchWhenReady(nodeNames);
}

void MainWindow::openRun(const QString& runId) {
  for (int i = kFixedTabs; i < tabs_->count(); ++i) {
    if (tabs_->widget(i)->property("runId").toString() == runId) {
      tabs_->setCurrentIndex(i);
      return;
    }
  }
  auto* tab = new DashboardTab(controller_, runId);
  tab->setProperty("runId", runId);
  const int index =
      tabs_->addTab(tab, QIcon(QStringLiteral(":/icons/dashboard.svg")), runId.right(9));
  tabs_->setTabToolTip(index, runId);
  tabs_->setCurrentIndex(index);
  connect(tab, &DashboardTab::titleChanged, this, [this, tab](const QString& title) {
    const int at = tabs_->indexOf(tab);
    if (at >= 0) tabs_->setTabText(at, title.size() > 28 ? title.left(27) + QChar(0x2026) : title);
  });
}

void MainWindow::compare(const QStringList& runIds) {
  auto* view = new CompareView(controller_, runIds);
  const int index = tabs_->addTab(view, QIcon(QStringLiteral(":/icons/compare.svg")),
                                  tr("Compare (%Ln)", nullptr, runIds.size()));
  tabs_->setTabToolTip(index, runIds.join(QStringLiteral(", ")));
  tabs_->setCurrentIndex(index);
}

void MainWindow::clone(const RunForm& form) {
  RunForm copy = form;
  copy.name = tr("%1 (copy)").arg(form.name);
  // A multi-node spec names hosts: check the nodes on them again. A one-node spec names none, and
  // setForm keeps the nodes checked now.
  const QStringList unknownHosts = resolveSpecHosts(&copy, controller_.nodeChoices());
  if (!unknownHosts.isEmpty()) {
    statusBar()->showMessage(
        tr("The cloned run also ran on %1, which no node here has as its host name: check the "
           "nodes to run on.")
            .arg(unknownHosts.join(QStringLiteral(", "))),
        15000);
  }
  setup_->setForm(copy);
  showPage(1);
}

void MainWindow::saveScreenshot(const QString& dir, const QString& name) {
  QApplication::processEvents();
  grab().save(dir + QLatin1Char('/') + name + QStringLiteral(".png"));
}

void MainWindow::runScreenshotTour(const QString& dir) {
  launchMode_ = QStringLiteral("--screenshots");
  auto save = [this, dir](const QString& name) { saveScreenshot(dir, name); };
  auto* deadline = new QTimer(this);
  deadline->setSingleShot(true);
  connect(deadline, &QTimer::timeout, this, [] {
    qWarning("screenshot tour: runs did not finish in time");
    QApplication::exit(1);
  });
  deadline->start(300000);
  auto launchNext = [this] {
    RunForm form = setup_->form();
    form.epochs = 2;
    if (!tourRuns_.isEmpty()) {  // the second run: the MLP, one choice away in the form
      form.name = QStringLiteral("fashion-mnist mlp, lr 0.05");
      form.model = QStringLiteral("mlp");
      form.lr = 0.05;
      form.hidden = {512, 256};
    }
    setup_->setForm(form);
    if (quitIfFormRefuses(QStringLiteral("--screenshots"))) return;
    controller_.launch(setup_->form());
  };
  connect(&controller_, &Controller::runLaunched, this,
          [this](const QString& runId) { tourRuns_ << runId; });
  connect(&controller_, &Controller::runStateChanged, this,
          [this, save, launchNext, dir](const QString& runId, v1::RunState state) {
            if (state != v1::COMPLETED || !tourRuns_.contains(runId)) return;
            if (tourRuns_.size() < 2) {
              launchNext();
              return;
            }
            // Both done: let the last samples land and the charts redraw, then capture.
            QTimer::singleShot(3000, this, [this, save, dir] {
              showPage(0);
              save(QStringLiteral("nodes"));
              showPage(1);
              save(QStringLiteral("run-setup"));
              // The form's lower half: nodes to run on, ranks per node, world size.
              if (auto* scroll = setup_->findChild<QScrollArea*>()) {
                scroll->verticalScrollBar()->setValue(scroll->verticalScrollBar()->maximum());
                save(QStringLiteral("run-setup-nodes"));
                scroll->verticalScrollBar()->setValue(0);
              }
              openRun(tourRuns_.last());
              QTimer::singleShot(1500, this, [this, save, dir] {
                save(QStringLiteral("dashboard"));
                // The run's GPUs page (utilization, memory, power of each GPU of the run; empty
                // charts on a node without GPUs), then the same run over fractional epochs,
                // with a chart's export menu open.
                auto* tab = qobject_cast<DashboardTab*>(tabs_->currentWidget());
                if (tab != nullptr) {
                  tab->chartPages()->setCurrentIndex(1);
                  QApplication::processEvents();
                  save(QStringLiteral("dashboard-gpus"));
                  tab->chartPages()->setCurrentIndex(0);
                  tab->xModeBox()->setCurrentIndex(1);
                }
                QTimer::singleShot(1500, this, [this, save, dir, tab] {
                  // A right click on the loss chart: its context menu.
                  QMenu* menu = tab != nullptr ? tab->lossChart()->contextMenu() : nullptr;
                  if (menu != nullptr) {
                    menu->popup(tab->lossChart()->mapToGlobal(tab->lossChart()->rect().center() -
                                                              QPoint(60, 40)));
                  }
                  QTimer::singleShot(500, this, [this, save, dir, tab, menu] {
                    if (menu != nullptr) {
                      // Popups are windows of their own: grab the screen where the window is.
                      screen()
                          ->grabWindow(0, frameGeometry().x(), frameGeometry().y(),
                                       frameGeometry().width(), frameGeometry().height())
                          .save(dir + QStringLiteral("/dashboard-export.png"));
                      menu->hide();
                      tab->xModeBox()->setCurrentIndex(0);
                    }
                    showPage(2);
                    QTimer::singleShot(1000, this, [this, save] {
                      save(QStringLiteral("history"));
                      compare(tourRuns_);
                      QTimer::singleShot(2000, this, [save] {
                        save(QStringLiteral("compare"));
                        QApplication::exit(0);
                      });
                    });
                  });
                });
              });
            });
          });
  // Start once a node is online.
  auto* wait = new QTimer(this);
  connect(wait, &QTimer::timeout, this, [this, wait, launchNext] {
    for (const NodeView& node : controller_.nodes()) {
      if (node.state == NodeState::Online && node.info) {
        wait->stop();
        refreshNodeChoices();
        launchNext();
        return;
      }
    }
  });
  wait->start(500);
}

void MainWindow::closeEvent(QCloseEvent* event) {
  QSettings settings;
  settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
  settings.setValue(QStringLiteral("window/state"), saveState());
  settings.setValue(QStringLiteral("window/page"), std::min(tabs_->currentIndex(), kFixedTabs - 1));
  event->accept();
}

}  // namespace ringside::gui
