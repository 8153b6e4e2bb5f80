#include "ringside/gui/widgets/run_setup_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRadioButton>
#include <QScopedValueRollback>
#include <QScrollArea>
#include <QSignalBlocker>
#include <QSet>
#include <QSpinBox>
#include <QStackedWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <cstdint>
#include <limits>

#include "ringside/gui/dialog_folder.h"
#include "ringside/gui/export_files.h"

namespace ringside::gui {

namespace {

QDoubleSpinBox* doubleBox(double min, double max, int decimals, double step) {
  auto* box = new QDoubleSpinBox;
  box->setRange(min, max);
  box->setDecimals(decimals);
  box->setSingleStep(step);
  return box;
}

QSpinBox* intBox(int min, int max) {
  auto* box = new QSpinBox;
  box->setRange(min, max);
  return box;
}

QList<int> parseWidths(const QString& text) {
  QList<int> widths;
  for (const QString& part : text.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
    bool ok = false;
    const int width = part.trimmed().toInt(&ok);
    widths.append(ok ? width : 0);
  }
  return widths;
}

}  // namespace

RunSetupPanel::RunSetupPanel(QWidget* parent) : QWidget(parent) {
  auto* content = new QWidget;
  auto* column = new QVBoxLayout(content);

  auto* runBox = new QGroupBox(tr("Run"));
  auto* runForm = new QFormLayout(runBox);
  name_ = new QLineEdit;
  name_->setPlaceholderText(tr("e.g. fmnist baseline"));
  runForm->addRow(tr("&Name:"), name_);
  addErrorLabel(QStringLiteral("name"), name_, runForm);
  tags_ = new QLineEdit;
  tags_->setPlaceholderText(tr("comma-separated, e.g. sweep, mlp"));
  runForm->addRow(tr("&Tags:"), tags_);
  trainerJob_ = new QRadioButton(tr("Ringside trainer"));
  commandJob_ = new QRadioButton(tr("Custom command"));
  pythonJob_ = new QRadioButton(tr("PyTorch script"));
  pythonJob_->setToolTip(
      tr("Your own PyTorch DDP script, with three calls of the ringside package "
         "(init_process_group, watch, log): its loss and per-bucket all-reduce timings live "
         "(docs/pytorch.md)"));
  trainerJob_->setChecked(true);
  auto* jobRow = new QHBoxLayout;
  jobRow->addWidget(trainerJob_);
  jobRow->addWidget(pythonJob_);
  jobRow->addWidget(commandJob_);
  jobRow->addStretch();
  runForm->addRow(tr("Job:"), jobRow);
  column->addWidget(runBox);

  jobPages_ = new QStackedWidget;
  // Trainer page.
  auto* trainerPage = new QWidget;
  auto* trainerColumn = new QVBoxLayout(trainerPage);
  trainerColumn->setContentsMargins(0, 0, 0, 0);
  auto* dataBox = new QGroupBox(tr("Data and model"));
  auto* dataForm = new QFormLayout(dataBox);
  dataDir_ = new QLineEdit;
  auto* browse = new QPushButton(tr("Browse…"));
  auto* dataRow = new QHBoxLayout;
  dataRow->addWidget(dataDir_);
  dataRow->addWidget(browse);
  dataForm->addRow(tr("Dataset directory:"), dataRow);
  addErrorLabel(QStringLiteral("dataDir"), nullptr, dataForm);
  model_ = new QComboBox;
  model_->addItem(tr("CNN: 2 conv layers (oneDNN / cuDNN)"), QStringLiteral("cnn"));
  model_->addItem(tr("MLP: fully connected"), QStringLiteral("mlp"));
  model_->setToolTip(
      tr("The CNN learns more; 5 epochs take about a minute at 2 ranks on 2 cores. The MLP "
         "finishes in seconds"));
  dataForm->addRow(tr("&Model:"), model_);
  addErrorLabel(QStringLiteral("model"), nullptr, dataForm);
  hidden_ = new QLineEdit;
  hidden_->setToolTip(tr("Hidden layer widths; input and output sizes come from the dataset"));
  dataForm->addRow(tr("&Hidden layers:"), hidden_);
  addErrorLabel(QStringLiteral("hidden"), nullptr, dataForm);
  channels_ = new QLineEdit;
  channels_->setToolTip(
      tr("Output channels of each 3x3 conv stage (each followed by ReLU and "
         "2x2 max-pooling), input to output"));
  dataForm->addRow(tr("Conv &channels:"), channels_);
  addErrorLabel(QStringLiteral("channels"), nullptr, dataForm);
  dropout_ = new QDoubleSpinBox;
  dropout_->setRange(0.0, 0.99);
  dropout_->setDecimals(2);
  dropout_->setSingleStep(0.05);
  dropout_->setToolTip(tr("Probability that dropout zeroes a conv feature during training"));
  dataForm->addRow(tr("&Dropout:"), dropout_);
  addErrorLabel(QStringLiteral("dropout"), nullptr, dataForm);
  convAlgorithm_ = new QComboBox;
  convAlgorithm_->addItem(tr("Auto (Winograd where it is faster)"), QStringLiteral("auto"));
  convAlgorithm_->addItem(tr("Direct"), QStringLiteral("direct"));
  convAlgorithm_->setToolTip(
      tr("How the conv layers are computed. Auto uses oneDNN's Winograd kernel for the conv "
         "layers whose input and output channel counts are multiples of 16, on CPUs with "
         "AVX-512 (about 1.5x faster for the default CNN's second layer), and direct "
         "convolution elsewhere. Direct computes every layer directly, as PyTorch does on a "
         "CPU, and rounds like it. Run spec key conv_algorithm (ringside-trainer "
         "--conv-algorithm)."));
  dataForm->addRow(tr("Convol&ution:"), convAlgorithm_);
  addErrorLabel(QStringLiteral("convAlgorithm"), nullptr, dataForm);
  trainerColumn->addWidget(dataBox);

  auto* optBox = new QGroupBox(tr("Optimizer"));
  auto* optForm = new QFormLayout(optBox);
  optimizer_ = new QComboBox;
  optimizer_->addItem(tr("SGD"), QStringLiteral("sgd"));
  optimizer_->addItem(tr("AdamW"), QStringLiteral("adamw"));
  optForm->addRow(tr("&Optimizer:"), optimizer_);
  lr_ = doubleBox(0, 10, 6, 0.01);
  optForm->addRow(tr("&Learning rate:"), lr_);
  addErrorLabel(QStringLiteral("lr"), nullptr, optForm);
  momentum_ = doubleBox(0, 0.999999, 4, 0.05);
  optForm->addRow(tr("&Momentum:"), momentum_);
  addErrorLabel(QStringLiteral("momentum"), nullptr, optForm);
  nesterov_ = new QCheckBox(tr("Nesterov"));
  optForm->addRow(QString(), nesterov_);
  beta1_ = doubleBox(0, 0.999999, 4, 0.01);
  beta2_ = doubleBox(0, 0.999999, 6, 0.001);
  optForm->addRow(tr("Beta &1:"), beta1_);
  optForm->addRow(tr("Beta &2:"), beta2_);
  addErrorLabel(QStringLiteral("beta1"), nullptr, optForm);
  weightDecay_ = doubleBox(0, 10, 6, 0.001);
  optForm->addRow(tr("&Weight decay:"), weightDecay_);
  schedule_ = new QComboBox;
  schedule_->addItem(tr("Cosine"), QStringLiteral("cosine"));
  schedule_->addItem(tr("Step"), QStringLiteral("step"));
  schedule_->addItem(tr("Constant"), QStringLiteral("constant"));
  optForm->addRow(tr("LR &schedule:"), schedule_);
  warmup_ = intBox(0, 100000000);
  optForm->addRow(tr("&Warm-up steps:"), warmup_);
  stepEpochs_ = doubleBox(0, 100000, 2, 1);
  gamma_ = doubleBox(0, 1, 4, 0.05);
  lrMin_ = doubleBox(0, 10, 6, 0.001);
  optForm->addRow(tr("Decay every (epochs):"), stepEpochs_);
  addErrorLabel(QStringLiteral("lrStepEpochs"), nullptr, optForm);
  optForm->addRow(tr("Decay factor:"), gamma_);
  optForm->addRow(tr("Final learning rate:"), lrMin_);
  addErrorLabel(QStringLiteral("lrMin"), nullptr, optForm);
  trainerColumn->addWidget(optBox);

  auto* execBox = new QGroupBox(tr("Training"));
  auto* execForm = new QFormLayout(execBox);
  epochs_ = intBox(1, 1000000);
  execForm->addRow(tr("&Epochs:"), epochs_);
  globalBatch_ = intBox(1, 1 << 24);
  execForm->addRow(tr("&Global batch:"), globalBatch_);
  addErrorLabel(QStringLiteral("globalBatch"), nullptr, execForm);
  microBatch_ = intBox(0, 1 << 24);
  microBatch_->setSpecialValueText(tr("whole local batch"));
  microBatch_->setToolTip(
      tr("Gradient accumulation: each rank computes its local batch in passes of this many "
         "samples and sums their gradients before the all-reduce. Less memory for activations; "
         "the same step."));
  execForm->addRow(tr("&Micro-batch:"), microBatch_);
  addErrorLabel(QStringLiteral("microBatch"), nullptr, execForm);
  backend_ = new QComboBox;
  backend_->addItem(tr("Auto (GPU when present)"), QStringLiteral("auto"));
  backend_->addItem(tr("NCCL (GPU)"), QStringLiteral("nccl"));
  backend_->addItem(tr("MPI (CPU)"), QStringLiteral("mpi"));
  execForm->addRow(tr("&Backend:"), backend_);
  bucketMb_ = doubleBox(0.01, 4096, 2, 1);
  execForm->addRow(tr("Gradient &bucket (MiB):"), bucketMb_);
  checkpointEvery_ = intBox(0, 100000000);
  checkpointEvery_->setSpecialValueText(tr("at the end and on stop"));
  execForm->addRow(tr("&Checkpoint every (steps):"), checkpointEvery_);
  // The trainer takes 1 to 2^31 - 1 (run spec key log_every); so does the box.
  logEvery_ = intBox(1, std::numeric_limits<int32_t>::max());
  logEvery_->setToolTip(
      tr("How often every rank reports its metrics (loss, and its step, compute and all-reduce "
         "times, each the mean over the steps since its last report), in global steps; the last "
         "step of each epoch always reports. 1 = every step: the charts and the per-rank heatmap "
         "show every step, at the cost of more values to send and store. Run spec key log_every "
         "(ringside-trainer --log-every)."));
  execForm->addRow(tr("Metric &interval (steps):"), logEvery_);
  addErrorLabel(QStringLiteral("logEvery"), nullptr, execForm);
  seed_ = new QLineEdit;
  seed_->setValidator(
      new QRegularExpressionValidator(QRegularExpression(QStringLiteral("\\d{1,20}")), seed_));
  execForm->addRow(tr("S&eed:"), seed_);
  resumeFrom_ = new QLineEdit;
  resumeFrom_->setPlaceholderText(tr("start afresh"));
  resumeFrom_->setToolTip(
      tr("Continue from a checkpoint: a checkpoint file (ckpt-*.rsck), or a directory whose "
         "newest checkpoint is used, on the node that owns the run. The model, optimizer, global "
         "batch, seed and data must match the checkpoint's. Run spec key resume "
         "(ringside-trainer --resume)."));
  execForm->addRow(tr("Resume &from checkpoint:"), resumeFrom_);
  trainerColumn->addWidget(execBox);
  jobPages_->addWidget(trainerPage);

  // Command page.
  auto* commandPage = new QGroupBox(tr("Custom command"));
  auto* commandForm = new QFormLayout(commandPage);
  command_ = new QLineEdit;
  command_->setPlaceholderText(tr("python3 train.py --epochs 3"));
  command_->setToolTip(
      tr("Started under mpirun on every rank; report metrics by printing JSON "
         "Lines records on stdout (see docs/metrics.md)"));
  commandForm->addRow(tr("Co&mmand:"), command_);
  addErrorLabel(QStringLiteral("command"), nullptr, commandForm);
  jobPages_->addWidget(commandPage);

  // PyTorch script page.
  auto* pythonPage = new QGroupBox(tr("PyTorch script"));
  auto* pythonForm = new QFormLayout(pythonPage);
  pythonScript_ = new QLineEdit;
  pythonScript_->setPlaceholderText(tr("/srv/train/ddp_fashion_mnist.py"));
  pythonScript_->setToolTip(
      tr("The script's path on every node of the run (the agent's user must be able to read "
         "it). It joins the process group with ringside.torch.init_process_group(), times its "
         "all-reduces with ringside.torch.watch(model) and logs with ringside.log()."));
  pythonForm->addRow(tr("&Script:"), pythonScript_);
  addErrorLabel(QStringLiteral("pythonScript"), nullptr, pythonForm);
  pythonArgs_ = new QLineEdit;
  pythonArgs_->setPlaceholderText(tr("--epochs 3 --batch 256"));
  pythonForm->addRow(tr("&Arguments:"), pythonArgs_);
  pythonInterpreter_ = new QLineEdit;
  pythonInterpreter_->setToolTip(
      tr("The Python that runs the script on every node: one that has torch (Debian's "
         "/usr/bin/python3 with python3-torch, or a virtual environment's bin/python)"));
  pythonForm->addRow(tr("&Interpreter:"), pythonInterpreter_);
  addErrorLabel(QStringLiteral("pythonInterpreter"), nullptr, pythonForm);
  pythonWorkingDir_ = new QLineEdit;
  pythonWorkingDir_->setPlaceholderText(tr("the run's own directory"));
  pythonForm->addRow(tr("&Working directory:"), pythonWorkingDir_);
  pythonUseGpus_ = new QCheckBox(tr("Use GPUs (one per rank, NCCL)"));
  pythonUseGpus_->setToolTip(
      tr("Checked: every rank takes one of the node's free GPUs (CUDA_VISIBLE_DEVICES) and the "
         "process group uses NCCL. Unchecked: every rank takes a CPU core and uses gloo."));
  pythonForm->addRow(QString(), pythonUseGpus_);
  jobPages_->addWidget(pythonPage);
  column->addWidget(jobPages_);

  auto* placeBox = new QGroupBox(tr("Placement"));
  auto* placeForm = new QFormLayout(placeBox);
  nodeList_ = new QListWidget;
  nodeList_->setSelectionMode(QAbstractItemView::SingleSelection);
  nodeList_->setDragDropMode(QAbstractItemView::InternalMove);
  nodeList_->setDefaultDropAction(Qt::MoveAction);
  // As tall as its rows (setNodes), so the box does not grow with the window.
  nodeList_->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  nodeList_->setToolTip(
      tr("Check the nodes to run on. Ranks are placed in list order and the first checked node "
         "owns the run; drag a node to change the order."));
  // At 64 nodes: narrow the list by name or host, and check every shown node at once.
  nodeFilter_ = new QLineEdit;
  nodeFilter_->setPlaceholderText(tr("Filter nodes by name or host"));
  nodeFilter_->setClearButtonEnabled(true);
  checkAllNodes_ = new QPushButton(tr("Check all shown"));
  checkAllNodes_->setToolTip(
      tr("Checks every node the filter shows that can take the run's ranks now: online, not "
         "draining, and with a free GPU (or CPU slot, for a CPU run)."));
  uncheckAllNodes_ = new QPushButton(tr("Uncheck all"));
  auto* nodeTools = new QHBoxLayout;
  nodeTools->setContentsMargins(0, 0, 0, 0);
  nodeTools->addWidget(nodeFilter_, 1);
  nodeTools->addWidget(checkAllNodes_);
  nodeTools->addWidget(uncheckAllNodes_);
  placeForm->addRow(QString(), nodeTools);
  placeForm->addRow(tr("N&odes:"), nodeList_);
  addErrorLabel(QStringLiteral("nodeIds"), nullptr, placeForm);
  ranks_ = intBox(0, 4096);
  placeForm->addRow(tr("&Ranks per node:"), ranks_);
  addErrorLabel(QStringLiteral("ranksPerNode"), nullptr, placeForm);
  worldSize_ = new QLabel;
  placeForm->addRow(tr("World size:"), worldSize_);
  // A Slurm login node's job (docs/slurm.md): what sbatch is asked for.
  slurmBox_ = new QGroupBox(tr("Slurm job"));
  auto* slurmForm = new QFormLayout(slurmBox_);
  slurmPartition_ = new QComboBox;
  slurmPartition_->setEditable(true);
  slurmPartition_->setToolTip(
      tr("The partition the job goes to (sbatch --partition); the cluster's default partition "
         "is listed first. Empty: the default."));
  slurmForm->addRow(tr("Pa&rtition:"), slurmPartition_);
  slurmNodes_ = intBox(1, 4096);
  slurmNodes_->setToolTip(
      tr("Nodes of the job (sbatch --nodes); the ranks per node above are its tasks per node."));
  slurmForm->addRow(tr("Job &nodes:"), slurmNodes_);
  slurmGpus_ = intBox(0, 64);
  slurmGpus_->setSpecialValueText(tr("none"));
  slurmGpus_->setToolTip(tr("GPUs on each node of the job, asked for as the GPU request says."));
  slurmForm->addRow(tr("GPUs per node:"), slurmGpus_);
  slurmTime_ = intBox(0, 525600);
  slurmTime_->setSpecialValueText(tr("the partition's default"));
  slurmTime_->setSuffix(tr(" min"));
  slurmTime_->setToolTip(
      tr("The job's time limit (sbatch --time). 90 s before it the trainer writes its checkpoint "
         "and stops."));
  slurmForm->addRow(tr("Time &limit:"), slurmTime_);
  slurmAccount_ = new QLineEdit;
  slurmAccount_->setPlaceholderText(tr("your default"));
  slurmForm->addRow(tr("Acco&unt:"), slurmAccount_);
  slurmQos_ = new QLineEdit;
  slurmQos_->setPlaceholderText(tr("the default"));
  slurmForm->addRow(tr("&QOS:"), slurmQos_);
  slurmGpuRequest_ = new QLineEdit;
  slurmGpuRequest_->setPlaceholderText(QStringLiteral("--gpus-per-node={n}"));
  slurmGpuRequest_->setToolTip(
      tr("How this cluster asks for GPUs, {n} standing for the GPUs per node: "
         "--gpus-per-node={n}, --gres=gpu:{n}, or a typed one such as --gres=gpu:a100:{n}."));
  slurmForm->addRow(tr("GPU re&quest:"), slurmGpuRequest_);
  slurmRequeue_ = new QCheckBox(tr("Requeue when a node fails"));
  slurmRequeue_->setToolTip(
      tr("Unchecked (sbatch --no-requeue): a failed node ends the run, FAILED, saying so. "
         "Checked: Slurm starts the job again from the beginning."));
  slurmForm->addRow(QString(), slurmRequeue_);
  addErrorLabel(QStringLiteral("slurm"), nullptr, slurmForm);
  slurmBox_->setVisible(false);
  placeForm->addRow(slurmBox_);
  // RunSpec.hang_timeout_s: 0 (never) to a week (run_spec.h kMaxTimeoutSeconds).
  hangTimeout_ = intBox(0, kMaxTimeoutSeconds);
  hangTimeout_->setSpecialValueText(tr("never"));
  hangTimeout_->setSuffix(tr(" s"));
  hangTimeout_->setToolTip(
      tr("The agent fails the run when no rank has made progress for this long (a hung rank: "
         "stopped, frozen, or deadlocked), after flagging it stalled within seconds on the "
         "dashboard. Default 600 s (10 minutes); for the trainer it must stay below its "
         "collective timeout (900 s by default). Run spec key hang_timeout_s."));
  placeForm->addRow(tr("Han&g timeout:"), hangTimeout_);
  addErrorLabel(QStringLiteral("hangTimeout"), nullptr, placeForm);
  priority_ = new QComboBox;
  priority_->setObjectName(QStringLiteral("queuePriority"));
  priority_->addItem(tr("high"), static_cast<int>(v1::HIGH_PRIORITY));
  priority_->addItem(tr("normal"), static_cast<int>(v1::NORMAL_PRIORITY));
  priority_->addItem(tr("low"), static_cast<int>(v1::LOW_PRIORITY));
  priority_->setCurrentIndex(1);
  priority_->setToolTip(
      tr("When its slots are busy the run waits in the node's queue: high runs start before "
         "normal ones, normal before low, and within a priority in the order they were "
         "launched. The Queue page changes it while the run waits."));
  placeForm->addRow(tr("Queue &priority:"), priority_);
  environment_ = new QPlainTextEdit;
  environment_->setPlaceholderText(tr("NAME=value, one per line"));
  environment_->setToolTip(
      tr("Extra environment of every rank, e.g. OMP_NUM_THREADS=1 or "
         "NCCL_DEBUG=INFO"));
  environment_->setTabChangesFocus(true);
  environment_->setFixedHeight(environment_->fontMetrics().lineSpacing() * 3 + 12);
  placeForm->addRow(tr("En&vironment:"), environment_);
  addErrorLabel(QStringLiteral("environment"), nullptr, placeForm);
  column->addWidget(placeBox);
  column->addStretch();

  auto* scroll = new QScrollArea;
  scroll->setWidget(content);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);

  auto* load = new QPushButton(tr("L&oad preset…"));
  auto* save = new QPushButton(tr("&Save preset…"));
  launch_ = new QPushButton(tr("&Launch"));
  launch_->setDefault(true);
  launch_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Return));
  launch_->setToolTip(tr("Launch the run (Ctrl+Enter)"));
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(load);
  buttons->addWidget(save);
  buttons->addStretch();
  buttons->addWidget(launch_);

  auto* outer = new QVBoxLayout(this);
  outer->addWidget(scroll);
  outer->addLayout(buttons);

  // The run a user watches (the CNN); the MLP is one choice away in the Model box.
  setForm(watchedDefaultRun());
  userChoseRanks_ = false;  // the ranks follow the node checked by default (setNodes)

  connect(browse, &QPushButton::clicked, this, [this] {
    const QString dir =
        QFileDialog::getExistingDirectory(this, tr("Dataset directory"),
                                          QFileInfo(dataDir_->text()).isDir()
                                              ? dataDir_->text()
                                              : dialogFolder(kDatasetDialog));
    if (!dir.isEmpty()) dataDir_->setText(dir);
  });
  for (QRadioButton* job : {trainerJob_, commandJob_, pythonJob_}) {
    connect(job, &QRadioButton::toggled, this, [this](bool on) {
      if (!on) return;
      jobPages_->setCurrentIndex(trainerJob_->isChecked() ? 0 : commandJob_->isChecked() ? 1 : 2);
      // The kind of slot the default ranks count may have changed (GPUs or cores).
      if (!userChoseRanks_) applyDefaultRanks();
      revalidate();
    });
  }
  connect(load, &QPushButton::clicked, this, &RunSetupPanel::loadPreset);
  connect(save, &QPushButton::clicked, this, &RunSetupPanel::savePreset);
  connect(launch_, &QPushButton::clicked, this, [this] {
    if (canLaunch()) emit launchRequested(form());
  });
  // Revalidate on every edit.
  for (QLineEdit* edit : {name_, tags_, dataDir_, hidden_, channels_, seed_, resumeFrom_, command_,
                          pythonScript_, pythonArgs_, pythonInterpreter_, pythonWorkingDir_}) {
    connect(edit, &QLineEdit::textChanged, this, &RunSetupPanel::revalidate);
  }
  connect(environment_, &QPlainTextEdit::textChanged, this, &RunSetupPanel::revalidate);
  connect(pythonUseGpus_, &QCheckBox::toggled, this, [this] {
    if (!userChoseRanks_) applyDefaultRanks();
    revalidate();
  });
  connect(backend_, &QComboBox::currentIndexChanged, this, [this] {
    if (!userChoseRanks_) applyDefaultRanks();
  });
  // A change of the ranks by the user (not by code) ends the default.
  connect(ranks_, &QSpinBox::valueChanged, this, [this] {
    if (!updatingNodes_) userChoseRanks_ = true;
  });
  for (QComboBox* combo : {model_, convAlgorithm_, optimizer_, schedule_, backend_}) {
    connect(combo, &QComboBox::currentIndexChanged, this, &RunSetupPanel::revalidate);
  }
  for (QDoubleSpinBox* box : {lr_, momentum_, weightDecay_, beta1_, beta2_, stepEpochs_, gamma_,
                              lrMin_, bucketMb_, dropout_}) {
    connect(box, &QDoubleSpinBox::valueChanged, this, &RunSetupPanel::revalidate);
  }
  for (QSpinBox* box : {warmup_, epochs_, globalBatch_, microBatch_, checkpointEvery_, logEvery_,
                        ranks_, hangTimeout_, slurmNodes_, slurmGpus_, slurmTime_}) {
    connect(box, &QSpinBox::valueChanged, this, &RunSetupPanel::revalidate);
  }
  for (QLineEdit* edit : {slurmAccount_, slurmQos_, slurmGpuRequest_}) {
    connect(edit, &QLineEdit::textChanged, this, &RunSetupPanel::revalidate);
  }
  connect(slurmPartition_, &QComboBox::currentTextChanged, this, &RunSetupPanel::revalidate);
  connect(nodeList_, &QListWidget::itemChanged, this, [this] {
    if (updatingNodes_) return;
    userChoseNodes_ = true;  // a check box was clicked
    revalidate();
  });
  connect(nodeFilter_, &QLineEdit::textChanged, this, &RunSetupPanel::filterNodes);
  connect(checkAllNodes_, &QPushButton::clicked, this, [this] { checkShownNodes(true); });
  connect(uncheckAllNodes_, &QPushButton::clicked, this, [this] { checkShownNodes(false); });
  // A drag changes the rank order (and the owner) shown in the world-size read-out.
  connect(nodeList_->model(), &QAbstractItemModel::rowsMoved, this, [this] {
    if (!updatingNodes_) revalidate();
  });
  revalidate();
}

void RunSetupPanel::addErrorLabel(const QString& field, QWidget*, QFormLayout* layout) {
  auto* label = new QLabel;
  label->setWordWrap(true);
  QPalette palette = label->palette();
  palette.setColor(QPalette::WindowText, QColor(0xc0, 0x1c, 0x28));
  label->setPalette(palette);
  label->setVisible(false);
  layout->addRow(QString(), label);
  errorLabels_.insert(field, label);
}

RunForm RunSetupPanel::form() const {
  RunForm f;
  f.name = name_->text();
  for (const QString& tag : tags_->text().split(QLatin1Char(','), Qt::SkipEmptyParts)) {
    if (!tag.trimmed().isEmpty()) f.tags << tag.trimmed();
  }
  f.job = trainerJob_->isChecked()   ? RunForm::Job::kTrainer
          : commandJob_->isChecked() ? RunForm::Job::kCommand
                                     : RunForm::Job::kPython;
  f.dataDir = dataDir_->text();
  f.model = model_->currentData().toString();
  f.hidden = parseWidths(hidden_->text());
  f.channels = parseWidths(channels_->text());
  f.dropout = dropout_->value();
  f.convAlgorithm = convAlgorithm_->currentData().toString();
  f.optimizer = optimizer_->currentData().toString();
  f.lr = lr_->value();
  f.momentum = momentum_->value();
  f.nesterov = nesterov_->isChecked();
  f.weightDecay = weightDecay_->value();
  f.beta1 = beta1_->value();
  f.beta2 = beta2_->value();
  f.lrSchedule = schedule_->currentData().toString();
  f.warmupSteps = warmup_->value();
  f.lrStepEpochs = stepEpochs_->value();
  f.lrGamma = gamma_->value();
  f.lrMin = lrMin_->value();
  f.epochs = epochs_->value();
  f.globalBatch = globalBatch_->value();
  f.microBatch = microBatch_->value();
  f.backend = backend_->currentData().toString();
  f.bucketMb = bucketMb_->value();
  f.checkpointEvery = checkpointEvery_->value();
  f.logEvery = logEvery_->value();
  f.hangTimeoutSeconds = hangTimeout_->value();
  f.priority = static_cast<v1::RunPriority>(priority_->currentData().toInt());
  f.seed = seed_->text().toULongLong();
  f.resumeFrom = resumeFrom_->text().trimmed();
  f.trainerBase = trainerBase_;
  f.command = command_->text();
  f.pythonScript = pythonScript_->text();
  f.pythonArgs = pythonArgs_->text();
  f.pythonInterpreter = pythonInterpreter_->text();
  f.pythonWorkingDir = pythonWorkingDir_->text();
  f.pythonUseGpus = pythonUseGpus_->isChecked();
  f.environment = environment_->toPlainText();
  f.nodeIds = checkedNodeIds();
  f.ranksPerNode = ranks_->value();
  if (slurmOwner() != nullptr) {
    f.slurm.set_partition(slurmPartition_->currentText().trimmed().toStdString());
    f.slurm.set_nodes(static_cast<uint32_t>(slurmNodes_->value()));
    f.slurm.set_tasks_per_node(static_cast<uint32_t>(f.ranksPerNode));
    f.slurm.set_gpus_per_node(static_cast<uint32_t>(slurmGpus_->value()));
    f.slurm.set_time_limit_min(static_cast<uint32_t>(slurmTime_->value()));
    f.slurm.set_account(slurmAccount_->text().trimmed().toStdString());
    f.slurm.set_qos(slurmQos_->text().trimmed().toStdString());
    f.slurm.set_gpu_request(slurmGpuRequest_->text().trimmed().toStdString());
    f.slurm.set_requeue(slurmRequeue_->isChecked());
  }
  return f;
}

void RunSetupPanel::setForm(const RunForm& f) {
  name_->setText(f.name);
  tags_->setText(f.tags.join(QStringLiteral(", ")));
  const int page = f.job == RunForm::Job::kTrainer ? 0 : f.job == RunForm::Job::kCommand ? 1 : 2;
  (page == 0 ? trainerJob_ : page == 1 ? commandJob_ : pythonJob_)->setChecked(true);
  jobPages_->setCurrentIndex(page);
  dataDir_->setText(f.dataDir);
  QStringList widths;
  for (int width : f.hidden) widths << QString::number(width);
  hidden_->setText(widths.join(QLatin1Char(',')));
  model_->setCurrentIndex(std::max(0, model_->findData(f.model)));
  QStringList channels;
  for (int count : f.channels) channels << QString::number(count);
  channels_->setText(channels.join(QLatin1Char(',')));
  dropout_->setValue(f.dropout);
  convAlgorithm_->setCurrentIndex(std::max(0, convAlgorithm_->findData(f.convAlgorithm)));
  optimizer_->setCurrentIndex(std::max(0, optimizer_->findData(f.optimizer)));
  lr_->setValue(f.lr);
  momentum_->setValue(f.momentum);
  nesterov_->setChecked(f.nesterov);
  weightDecay_->setValue(f.weightDecay);
  beta1_->setValue(f.beta1);
  beta2_->setValue(f.beta2);
  schedule_->setCurrentIndex(std::max(0, schedule_->findData(f.lrSchedule)));
  warmup_->setValue(static_cast<int>(f.warmupSteps));
  stepEpochs_->setValue(f.lrStepEpochs);
  gamma_->setValue(f.lrGamma);
  lrMin_->setValue(f.lrMin);
  epochs_->setValue(f.epochs);
  globalBatch_->setValue(static_cast<int>(f.globalBatch));
  microBatch_->setValue(static_cast<int>(f.microBatch));
  backend_->setCurrentIndex(std::max(0, backend_->findData(f.backend)));
  bucketMb_->setValue(f.bucketMb);
  checkpointEvery_->setValue(static_cast<int>(f.checkpointEvery));
  logEvery_->setValue(f.logEvery);
  hangTimeout_->setValue(f.hangTimeoutSeconds);
  const int priorityIndex = priority_->findData(static_cast<int>(f.priority));
  priority_->setCurrentIndex(priorityIndex >= 0 ? priorityIndex
                                                : priority_->findData(v1::NORMAL_PRIORITY));
  seed_->setText(QString::number(f.seed));
  resumeFrom_->setText(f.resumeFrom);
  trainerBase_ = f.trainerBase;
  command_->setText(f.command);
  pythonScript_->setText(f.pythonScript);
  pythonArgs_->setText(f.pythonArgs);
  pythonInterpreter_->setText(f.pythonInterpreter);
  pythonWorkingDir_->setText(f.pythonWorkingDir);
  pythonUseGpus_->setChecked(f.pythonUseGpus);
  environment_->setPlainText(f.environment);
  if (!f.nodeIds.isEmpty()) {
    checkNodes(f.nodeIds);
    if (!checkedNodeIds().isEmpty()) userChoseNodes_ = true;
  }
  {
    const QScopedValueRollback<bool> updating(updatingNodes_, true);
    ranks_->setValue(f.ranksPerNode);
  }
  if (f.slurm.nodes() > 0) {
    slurmPartition_->setCurrentText(QString::fromStdString(f.slurm.partition()));
    slurmNodes_->setValue(static_cast<int>(f.slurm.nodes()));
    slurmGpus_->setValue(static_cast<int>(f.slurm.gpus_per_node()));
    slurmTime_->setValue(static_cast<int>(f.slurm.time_limit_min()));
    slurmAccount_->setText(QString::fromStdString(f.slurm.account()));
    slurmQos_->setText(QString::fromStdString(f.slurm.qos()));
    slurmGpuRequest_->setText(QString::fromStdString(f.slurm.gpu_request()));
    slurmRequeue_->setChecked(f.slurm.requeue());
  }
  // A form set by code (a clone, a preset, a launch mode) keeps its ranks; only the new form the
  // panel starts with follows the default node (the constructor resets this).
  userChoseRanks_ = true;
  revalidate();
}

const NodeChoice* RunSetupPanel::slurmOwner() const {
  const QStringList checked = checkedNodeIds();
  if (checked.isEmpty()) return nullptr;
  for (const NodeChoice& node : nodes_) {
    if (node.nodeId == checked.first()) return node.slurm ? &node : nullptr;
  }
  return nullptr;
}

QString RunSetupPanel::nodeItemText(const NodeChoice& node) const {
  const QString state = !node.online    ? tr("offline")
                        : node.draining ? tr("draining")
                                        : tr("online");
  QString freeText;
  if (node.slurm) {
    freeText = node.slurmPartitions.isEmpty()
                   ? tr("Slurm cluster")
                   : tr("Slurm cluster: %1").arg(node.slurmPartitions.join(QStringLiteral(", ")));
  } else if (node.freeCpuSlots < 0) {
    freeText = tr("free slots unknown");
  } else if (node.gpuSlotsTotal > 0) {
    freeText = tr("free: %L1 of %L2 GPUs, %L3 CPU slots")
                   .arg(node.freeGpuSlots)
                   .arg(node.gpuSlotsTotal)
                   .arg(node.freeCpuSlots);
  } else {
    freeText = tr("free CPU slots: %L1").arg(node.freeCpuSlots);
  }
  return tr("%1 (%2, %3)").arg(node.name.isEmpty() ? node.nodeId : node.name, state, freeText);
}

QStringList RunSetupPanel::checkedNodeIds() const {
  QStringList ids;
  for (int row = 0; row < nodeList_->count(); ++row) {
    const QListWidgetItem* item = nodeList_->item(row);
    if (item->checkState() == Qt::Checked) ids << item->data(Qt::UserRole).toString();
  }
  return ids;
}

void RunSetupPanel::checkNodes(const QStringList& nodeIds) {
  const QScopedValueRollback<bool> updating(updatingNodes_, true);
  int top = 0;
  for (const QString& nodeId : nodeIds) {
    for (int row = top; row < nodeList_->count(); ++row) {
      if (nodeList_->item(row)->data(Qt::UserRole).toString() == nodeId) {
        nodeList_->insertItem(top++, nodeList_->takeItem(row));
        break;
      }
    }
  }
  for (int row = 0; row < nodeList_->count(); ++row) {
    QListWidgetItem* item = nodeList_->item(row);
    item->setCheckState(nodeIds.contains(item->data(Qt::UserRole).toString()) ? Qt::Checked
                                                                              : Qt::Unchecked);
  }
}

void RunSetupPanel::checkDefaultNode() {
  // The first node that can take the run's ranks, else the first online one, else the first.
  QString choice, online;
  const RunForm current = form();
  for (const NodeChoice& node : nodes_) {
    if (canTakeRanks(current, node)) {
      choice = node.nodeId;
      break;
    }
    if (online.isEmpty() && node.online && !node.draining) online = node.nodeId;
  }
  if (choice.isEmpty()) choice = online;
  if (choice.isEmpty() && !nodes_.isEmpty()) choice = nodes_.first().nodeId;
  const QScopedValueRollback<bool> updating(updatingNodes_, true);
  for (int row = 0; row < nodeList_->count(); ++row) {
    QListWidgetItem* item = nodeList_->item(row);
    item->setCheckState(item->data(Qt::UserRole).toString() == choice ? Qt::Checked
                                                                      : Qt::Unchecked);
  }
}

void RunSetupPanel::setNodes(const QList<NodeChoice>& nodes) {
  nodes_ = nodes;
  {
    const QScopedValueRollback<bool> updating(updatingNodes_, true);
    QHash<QString, const NodeChoice*> byId;
    for (const NodeChoice& node : nodes_) byId.insert(node.nodeId, &node);
    QHash<QString, QListWidgetItem*> listed;
    for (int row = nodeList_->count() - 1; row >= 0; --row) {
      const QString nodeId = nodeList_->item(row)->data(Qt::UserRole).toString();
      if (byId.contains(nodeId)) {
        listed.insert(nodeId, nodeList_->item(row));
      } else {
        delete nodeList_->takeItem(row);
      }
    }
    for (const NodeChoice& node : nodes_) {
      QListWidgetItem* item = listed.value(node.nodeId);
      if (item == nullptr) {
        item = new QListWidgetItem(nodeList_);
        item->setData(Qt::UserRole, node.nodeId);
        item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsUserCheckable |
                       Qt::ItemIsDragEnabled);
        item->setCheckState(Qt::Unchecked);
      }
      item->setText(nodeItemText(node));
      item->setToolTip(node.hostName.isEmpty() ? QString() : tr("Host: %1").arg(node.hostName));
    }
    if (!userChoseNodes_) checkDefaultNode();
    filterNodes();  // a node that joined is hidden too when it does not match
    if (!userChoseRanks_) applyDefaultRanks();
    // Tall enough for up to twelve nodes without scrolling (a cluster's nodes scroll, with the
    // filter above to narrow them).
    const int rows = std::clamp(nodeList_->count(), 1, 12);
    const int rowHeight = nodeList_->count() > 0 ? nodeList_->sizeHintForRow(0)
                                                 : nodeList_->fontMetrics().height() + 4;
    nodeList_->setFixedHeight(rows * rowHeight + 2 * nodeList_->frameWidth() + 2);
  }
  revalidate();
}

void RunSetupPanel::filterNodes() {
  const QString text = nodeFilter_->text().trimmed();
  // By the item's text and the node's host name (not its tooltip, whose "Host:" every node has).
  QHash<QString, QString> hostOf;
  for (const NodeChoice& node : nodes_) hostOf.insert(node.nodeId, node.hostName);
  for (int row = 0; row < nodeList_->count(); ++row) {
    QListWidgetItem* item = nodeList_->item(row);
    const QString host = hostOf.value(item->data(Qt::UserRole).toString());
    item->setHidden(!text.isEmpty() && !item->text().contains(text, Qt::CaseInsensitive) &&
                    !host.contains(text, Qt::CaseInsensitive));
  }
}

void RunSetupPanel::checkShownNodes(bool checked) {
  QSet<QString> usable;
  const RunForm current = form();
  for (const NodeChoice& node : nodes_) {
    if (canTakeRanks(current, node)) usable.insert(node.nodeId);
  }
  {
    const QScopedValueRollback<bool> updating(updatingNodes_, true);
    for (int row = 0; row < nodeList_->count(); ++row) {
      QListWidgetItem* item = nodeList_->item(row);
      if (!checked) {
        item->setCheckState(Qt::Unchecked);
      } else if (!item->isHidden() && usable.contains(item->data(Qt::UserRole).toString())) {
        item->setCheckState(Qt::Checked);
      }
    }
  }
  userChoseNodes_ = true;
  revalidate();
}

void RunSetupPanel::applyDefaultRanks() {
  const QStringList checked = checkedNodeIds();
  if (checked.isEmpty()) return;
  for (const NodeChoice& node : nodes_) {
    if (node.nodeId != checked.first()) continue;
    // The trainer's auto backend and GPU scripts count GPUs; the other jobs cores.
    RunForm current = form();
    int ranks = defaultRanksPerNode(node);
    if (!usesGpus(current, node)) {
      NodeChoice cpuOnly = node;
      cpuOnly.gpuSlotsTotal = 0;
      ranks = defaultRanksPerNode(cpuOnly);
    }
    const QScopedValueRollback<bool> updating(updatingNodes_, true);
    ranks_->setValue(ranks);
    return;
  }
}

QString RunSetupPanel::worldSizeText() const { return worldSize_->text(); }

bool RunSetupPanel::canLaunch() const { return shownErrors_.isEmpty() && !nodes_.isEmpty(); }

void RunSetupPanel::revalidate() {
  const bool cnn = model_->currentData().toString() == QLatin1String("cnn");
  hidden_->setEnabled(!cnn);
  channels_->setEnabled(cnn);
  dropout_->setEnabled(cnn);
  convAlgorithm_->setEnabled(cnn);
  const bool sgd = optimizer_->currentData().toString() == QLatin1String("sgd");
  momentum_->setEnabled(sgd);
  nesterov_->setEnabled(sgd);
  beta1_->setEnabled(!sgd);
  beta2_->setEnabled(!sgd);
  const QString schedule = schedule_->currentData().toString();
  stepEpochs_->setEnabled(schedule == QLatin1String("step"));
  gamma_->setEnabled(schedule == QLatin1String("step"));
  lrMin_->setEnabled(schedule == QLatin1String("cosine"));

  const NodeChoice* slurmNode = slurmOwner();
  slurmBox_->setVisible(slurmNode != nullptr);
  if (slurmNode != nullptr) {
    // Its partitions, as the node last reported them; what was typed stays.
    const QString typed = slurmPartition_->currentText();
    QStringList listed;
    for (int i = 0; i < slurmPartition_->count(); ++i) listed << slurmPartition_->itemText(i);
    if (listed != slurmNode->slurmPartitions) {
      const QSignalBlocker block(slurmPartition_);
      slurmPartition_->clear();
      slurmPartition_->addItems(slurmNode->slurmPartitions);
      slurmPartition_->setCurrentText(typed);
    }
  }
  const RunForm current = form();
  const int nodeCount = slurmNode != nullptr ? static_cast<int>(current.slurm.nodes())
                                             : static_cast<int>(current.nodeIds.size());
  const int ranks = current.ranksPerNode;
  const int world = nodeCount * ranks;
  if (nodeCount == 0) {
    worldSize_->setText(tr("no node chosen"));
  } else {
    const QString nodesText = nodeCount == 1 ? tr("1 node") : tr("%L1 nodes").arg(nodeCount);
    const QString ranksText = ranks == 1 ? tr("1 rank") : tr("%L1 ranks").arg(ranks);
    const QString worldText = world == 1 ? tr("1 rank") : tr("%L1 ranks").arg(world);
    QString text = tr("%1 × %2 = %3").arg(nodesText, ranksText, worldText);
    if (slurmNode != nullptr) {
      text += QLatin1Char('\n') + tr("Slurm places the job on nodes of its choice.");
    } else if (nodeCount > 1) {
      QString owner = current.nodeIds.first();
      for (const NodeChoice& node : nodes_) {
        if (node.nodeId == owner && !node.name.isEmpty()) owner = node.name;
      }
      text += QLatin1Char('\n') + tr("Rank 0 runs on %1, which owns the run.").arg(owner);
    }
    worldSize_->setText(text);
  }
  worldSize_->setToolTip(
      nodeCount > 1 ? tr("Every rank reports its metrics to the agent of the node that owns the "
                         "run; the dashboard's per-rank view shows every rank, grouped by node.")
                    : QString());
  shownErrors_.clear();
  for (const FieldError& error : validate(current, nodes_)) {
    if (!shownErrors_.contains(error.field)) shownErrors_.insert(error.field, error.message);
  }
  for (auto it = errorLabels_.begin(); it != errorLabels_.end(); ++it) {
    const QString message = shownErrors_.value(it.key());
    it.value()->setText(message);
    it.value()->setVisible(!message.isEmpty());
  }
  launch_->setEnabled(canLaunch());
  launch_->setToolTip(nodes_.isEmpty() ? tr("No node to launch on: add one in Nodes")
                                       : tr("Launch the run (Ctrl+Enter)"));
}

void RunSetupPanel::loadPreset() {
  const QString path = QFileDialog::getOpenFileName(
      this, tr("Load run preset"), dialogFolder(kPresetDialog), tr("Run presets (*.json)"));
  if (path.isEmpty()) return;
  rememberDialogFolder(kPresetDialog, path);
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) {
    QMessageBox::warning(this, tr("Load preset"),
                         tr("Cannot read %1: %2").arg(path, file.errorString()));
    return;
  }
  QJsonParseError parseError;
  const QJsonDocument doc = QJsonDocument::fromJson(file.readAll(), &parseError);
  QString error = parseError.error == QJsonParseError::NoError && doc.isObject()
                      ? QString()
                      : tr("%1 is not valid JSON: %2").arg(path, parseError.errorString());
  RunForm loaded;
  if (error.isEmpty()) loaded = fromPreset(doc.object(), &error);
  if (!error.isEmpty()) {
    QMessageBox::warning(this, tr("Load preset"), error);
    return;
  }
  // The preset's nodes that are listed here; none: the nodes checked now stay (setForm).
  QStringList listed;
  for (const QString& nodeId : loaded.nodeIds) {
    for (const NodeChoice& node : nodes_) {
      if (node.nodeId == nodeId) listed << nodeId;
    }
  }
  loaded.nodeIds = listed;
  setForm(loaded);
}

void RunSetupPanel::savePreset() {
  QString path = QFileDialog::getSaveFileName(
      this, tr("Save run preset"),
      QDir(dialogFolder(kPresetDialog))
          .filePath(fileSafeName(name_->text().trimmed()) + QStringLiteral(".json")),
      tr("Run presets (*.json)"));
  if (path.isEmpty()) return;
  rememberDialogFolder(kPresetDialog, path);
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate) ||
      file.write(QJsonDocument(toPreset(form())).toJson()) < 0) {
    QMessageBox::warning(this, tr("Save preset"),
                         tr("Cannot write %1: %2").arg(path, file.errorString()));
  }
}

}  // namespace ringside::gui
