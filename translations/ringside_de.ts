<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="de_DE">
<context>
    <name>Duration</name>
    <message>
        <location filename="../gui/core/src/duration_format.cpp" line="18"/>
        <source>%1 h %2 min</source>
        <translation>%1 h %2 min</translation>
    </message>
    <message>
        <location filename="../gui/core/src/duration_format.cpp" line="23"/>
        <source>%1 min %2 s</source>
        <translation>%1 min %2 s</translation>
    </message>
    <message>
        <location filename="../gui/core/src/duration_format.cpp" line="27"/>
        <source>%1 s</source>
        <translation>%1 s</translation>
    </message>
</context>
<context>
    <name>RunCsvExport</name>
    <message>
        <location filename="../gui/widgets/src/run_csv_export.cpp" line="33"/>
        <source>Export metrics as CSV</source>
        <translation>Metriken als CSV exportieren</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_csv_export.cpp" line="35"/>
        <source>CSV files (*.csv);;All files (*)</source>
        <translation>CSV-Dateien (*.csv);;Alle Dateien (*)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_csv_export.cpp" line="40"/>
        <source>Export metrics as CSV into folder</source>
        <translation>Metriken als CSV in Ordner exportieren</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_csv_export.cpp" line="52"/>
        <source>Export failed</source>
        <translation>Export fehlgeschlagen</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_csv_export.cpp" line="53"/>
        <source>Could not write %1: %2</source>
        <translation>%1 konnte nicht geschrieben werden: %2</translation>
    </message>
</context>
<context>
    <name>StallText</name>
    <message>
        <location filename="../gui/core/src/stall_text.cpp" line="27"/>
        <source>Stalled: no progress for %1 since step %2 (threshold %3). %4</source>
        <translation>Stockt: kein Fortschritt seit %1, seit Schritt %2 (Schwelle %3). %4</translation>
    </message>
</context>
<context>
    <name>StragglerText</name>
    <message>
        <source>waiting for a CPU</source>
        <translation>wartet auf eine CPU</translation>
    </message>
    <message>
        <location filename="../gui/core/src/straggler_text.cpp" line="33"/>
        <source>straggler: none at step %1: no rank&apos;s data or compute time keeps the others waiting</source>
        <translation>Nachzügler: keiner bei Schritt %1: die Daten- oder Rechenzeit keines Rangs lässt die anderen warten</translation>
    </message>
    <message>
        <location filename="../gui/core/src/straggler_text.cpp" line="39"/>
        <source>data</source>
        <translation>Daten</translation>
    </message>
    <message>
        <location filename="../gui/core/src/straggler_text.cpp" line="40"/>
        <source>compute</source>
        <translation>Rechnen</translation>
    </message>
    <message>
        <location filename="../gui/core/src/straggler_text.cpp" line="44"/>
        <source>rank %1</source>
        <translation>Rang %1</translation>
    </message>
    <message>
        <location filename="../gui/core/src/straggler_text.cpp" line="45"/>
        <source>rank %1 on %2</source>
        <translation>Rang %1 auf %2</translation>
    </message>
    <message>
        <location filename="../gui/core/src/straggler_text.cpp" line="55"/>
        <source>straggler: %1, %2: %3 ms vs median %4 ms; the other ranks wait %5 ms for it (step %6)</source>
        <translation>Nachzügler: %1, %2: %3 ms gegenüber Median %4 ms; die anderen Ränge warten %5 ms auf ihn (Schritt %6)</translation>
    </message>
    <message>
        <location filename="../gui/core/src/straggler_text.cpp" line="16"/>
        <source>%1 %</source>
        <translation>%1 %</translation>
    </message>
    <message>
        <location filename="../gui/core/src/straggler_text.cpp" line="27"/>
        <source>straggler: none (confidence %1, step %2): no rank&apos;s data or compute time keeps the others waiting</source>
        <translation>Nachzügler: keiner (Konfidenz %1, Schritt %2): die Daten- oder Rechenzeit keines Rangs lässt die anderen warten</translation>
    </message>
    <message>
        <location filename="../gui/core/src/straggler_text.cpp" line="48"/>
        <source>straggler: %1, %2: %3 ms vs median %4 ms; the other ranks wait %5 ms for it: %6 of the step time (confidence %7, step %8)</source>
        <translation>Nachzügler: %1, %2: %3 ms gegenüber Median %4 ms; die anderen Ränge warten %5 ms auf ihn: %6 der Schrittzeit (Konfidenz %7, Schritt %8)</translation>
    </message>
</context>
<context>
    <name>main</name>
    <message>
        <location filename="../gui/app/main.cpp" line="28"/>
        <source>Orchestrate and monitor data-parallel training.</source>
        <translation>Datenparalleles Training orchestrieren und überwachen.</translation>
    </message>
    <message>
        <location filename="../gui/app/main.cpp" line="33"/>
        <source>Directory for the run database, keys and the local agent.</source>
        <translation>Verzeichnis für die Laufdatenbank, die Schlüssel und den lokalen Agenten.</translation>
    </message>
    <message>
        <location filename="../gui/app/main.cpp" line="34"/>
        <location filename="../gui/app/main.cpp" line="56"/>
        <source>dir</source>
        <translation>Verzeichnis</translation>
    </message>
    <message>
        <location filename="../gui/app/main.cpp" line="38"/>
        <source>User-interface language, e.g. de or en.</source>
        <translation>Sprache der Benutzeroberfläche, z. B. de oder en.</translation>
    </message>
    <message>
        <location filename="../gui/app/main.cpp" line="39"/>
        <source>code</source>
        <translation>Code</translation>
    </message>
    <message>
        <location filename="../gui/app/main.cpp" line="41"/>
        <source>Launch the run in the setup form as soon as a node is online (with --local-cluster: on every node of the cluster, once all are online).</source>
        <translation>Den Lauf im Einrichtungsformular starten, sobald ein Knoten online ist (mit --local-cluster: auf jedem Knoten des Clusters, sobald alle online sind).</translation>
    </message>
    <message>
        <location filename="../gui/app/main.cpp" line="51"/>
        <source>Launch two short runs, save every main view as PNG in &lt;dir&gt;, and quit (scripts/screenshots). With --local-cluster: one run on every node of the cluster, its live dashboard and the nodes.</source>
        <translation>Zwei kurze Läufe starten, jede Hauptansicht als PNG in &lt;dir&gt; speichern und beenden (scripts/screenshots). Mit --local-cluster: ein Lauf auf jedem Knoten des Clusters, sein Live-Dashboard und die Knoten.</translation>
    </message>
    <message>
        <location filename="../gui/app/main.cpp" line="59"/>
        <source>Start as usual (run database, window, local agent), then quit: exit status 0 once every part works, 1 with the reason when one fails or the local agent (with --local-cluster: every node of the cluster) is not online within 30 s.</source>
        <translation>Wie gewohnt starten (Laufdatenbank, Fenster, lokaler Agent), dann beenden: Exit-Status 0, sobald jeder Teil funktioniert, 1 mit dem Grund, wenn einer fehlschlägt oder der lokale Agent (mit --local-cluster: jeder Knoten des Clusters) nicht innerhalb von 30 s online ist.</translation>
    </message>
    <message>
        <location filename="../gui/app/main.cpp" line="48"/>
        <source>Do not start the embedded local agent.</source>
        <translation>Den eingebetteten lokalen Agenten nicht starten.</translation>
    </message>
    <message>
        <location filename="../gui/app/main.cpp" line="66"/>
        <source>Add (or update) the nodes of the cluster that `scripts/local-cluster up N` made, read from FILE (default %1), and connect to them with the cluster&apos;s client key.</source>
        <translation>Die Knoten des Clusters, den `scripts/local-cluster up N` erstellt hat, aus DATEI lesen (Vorgabe %1), hinzufügen (oder aktualisieren) und sich mit dem Client-Schlüssel des Clusters mit ihnen verbinden.</translation>
    </message>
    <message>
        <location filename="../gui/app/main.cpp" line="75"/>
        <source>With --local-cluster: the cluster&apos;s JSON file.</source>
        <translation>Mit --local-cluster: die JSON-Datei des Clusters.</translation>
    </message>
    <message>
        <location filename="../gui/app/main.cpp" line="80"/>
        <source>ringside: unexpected argument %1 (see --help)</source>
        <translation>ringside: unerwartetes Argument %1 (siehe --help)</translation>
    </message>
    <message>
        <location filename="../gui/app/main.cpp" line="111"/>
        <location filename="../gui/app/main.cpp" line="126"/>
        <location filename="../gui/app/main.cpp" line="135"/>
        <source>Ringside cannot start</source>
        <translation>Ringside kann nicht starten</translation>
    </message>
</context>
<context>
    <name>ringside::gui</name>
    <message>
        <source>%1 has %L2 GPUs in all (one per rank); choose at most %L2 ranks per node, or add nodes.</source>
        <translation>%1 hat insgesamt %L2 GPUs (eine pro Rang); wählen Sie höchstens %L2 Ränge pro Knoten oder fügen Sie Knoten hinzu.</translation>
    </message>
    <message>
        <source>%1 has %L2 CPU slots in all; choose at most %L2 ranks per node, or add nodes.</source>
        <translation>%1 hat insgesamt %L2 CPU-Slots; wählen Sie höchstens %L2 Ränge pro Knoten oder fügen Sie Knoten hinzu.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="185"/>
        <source>Give the run a name.</source>
        <translation>Geben Sie dem Lauf einen Namen.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="162"/>
        <source>A run needs at least one rank.</source>
        <translation>Ein Lauf braucht mindestens einen Rang.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="113"/>
        <source>Choose at least one node to run on (add nodes under Nodes).</source>
        <translation>Wählen Sie mindestens einen Knoten für den Lauf (Knoten fügen Sie unter „Knoten“ hinzu).</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="122"/>
        <source>Node %1 is not known (removed?); choose another node.</source>
        <translation>Knoten %1 ist unbekannt (entfernt?); wählen Sie einen anderen Knoten.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="126"/>
        <source>%1 is offline; wait until it is online or choose another node.</source>
        <translation>%1 ist offline; warten Sie, bis er online ist, oder wählen Sie einen anderen Knoten.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="129"/>
        <source>%1 is draining and accepts no new runs; undrain it under Nodes or choose another node.</source>
        <translation>%1 ist gesperrt und nimmt keine neuen Läufe an; geben Sie ihn unter „Knoten“ frei oder wählen Sie einen anderen Knoten.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="154"/>
        <source>%1 and %2 are the same host (%3); choose only one of them.</source>
        <translation>%1 und %2 sind derselbe Rechner (%3); wählen Sie nur einen davon.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="209"/>
        <source>Enter the command to run, e.g. python3 train.py --epochs 3.</source>
        <translation>Geben Sie den auszuführenden Befehl ein, z. B. python3 train.py --epochs 3.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="213"/>
        <source>Choose the dataset directory.</source>
        <translation>Wählen Sie das Datensatzverzeichnis.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="216"/>
        <source>Give 1 to 4 conv stages&apos; channels, e.g. 32,64 (each stage halves the 28x28 image).</source>
        <translation>Geben Sie die Kanäle von 1 bis 4 Faltungsstufen an, z. B. 32,64 (jede Stufe halbiert das 28x28-Bild).</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="222"/>
        <source>Channels must be from 1 to %L1 (got %2).</source>
        <translation>Kanäle müssen zwischen 1 und %L1 liegen (erhalten: %2).</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="227"/>
        <source>Dropout is a probability from 0 to below 1.</source>
        <translation>Dropout ist eine Wahrscheinlichkeit von 0 bis unter 1.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="231"/>
        <source>Choose Auto or Direct.</source>
        <translation>Wählen Sie Automatisch oder Direkt.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="235"/>
        <source>Give at least one hidden layer width, e.g. 256,128.</source>
        <translation>Geben Sie mindestens eine Breite für eine verborgene Schicht an, z. B. 256,128.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="238"/>
        <source>Layer widths must be positive (got %1).</source>
        <translation>Schichtbreiten müssen positiv sein (erhalten: %1).</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="243"/>
        <source>Choose the MLP or the CNN.</source>
        <translation>Wählen Sie das MLP oder das CNN.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="245"/>
        <source>Train for at least one epoch.</source>
        <translation>Trainieren Sie mindestens eine Epoche.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="246"/>
        <source>The global batch must be at least 1.</source>
        <translation>Der globale Batch muss mindestens 1 sein.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="252"/>
        <source>The global batch %L1 is not divisible by the world size %L2 (%L3 nodes × %L4 ranks); use a multiple of %L2.</source>
        <translation>Der globale Batch %L1 ist nicht durch die Weltgröße %L2 (%L3 Knoten × %L4 Ränge) teilbar; verwenden Sie ein Vielfaches von %L2.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="260"/>
        <source>The global batch %1 is not divisible by %2 ranks; use a multiple of %2.</source>
        <translation>Der globale Batch %1 ist nicht durch %2 Ränge teilbar; verwenden Sie ein Vielfaches von %2.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="266"/>
        <source>The micro-batch cannot be negative; 0 computes the local batch in one pass.</source>
        <translation>Der Mikro-Batch kann nicht negativ sein; 0 berechnet den lokalen Batch in einem Durchgang.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="271"/>
        <source>The micro-batch %L1 does not divide the local batch %L2 (global batch %L3 / %L4 ranks); use a divisor of %L2, or 0.</source>
        <translation>Der Mikro-Batch %L1 teilt den lokalen Batch %L2 nicht (globaler Batch %L3 / %L4 Ranks); verwenden Sie einen Teiler von %L2 oder 0.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="278"/>
        <source>Micro-batches need the MPI (CPU) backend; set 0 for NCCL.</source>
        <translation>Mikro-Batches brauchen das MPI-Backend (CPU); für NCCL 0 setzen.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="280"/>
        <source>The learning rate must be above 0.</source>
        <translation>Die Lernrate muss größer als 0 sein.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="282"/>
        <source>Momentum must be in [0, 1).</source>
        <translation>Das Momentum muss in [0, 1) liegen.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="284"/>
        <source>Weight decay cannot be negative.</source>
        <translation>Der Weight Decay darf nicht negativ sein.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="287"/>
        <source>AdamW betas must be in [0, 1).</source>
        <translation>Die AdamW-Betas müssen in [0, 1) liegen.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="290"/>
        <source>Choose SGD or AdamW.</source>
        <translation>Wählen Sie SGD oder AdamW.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="294"/>
        <source>Choose a constant, step or cosine schedule.</source>
        <translation>Wählen Sie einen konstanten, stufenweisen oder Kosinus-Zeitplan.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="296"/>
        <source>Warm-up steps cannot be negative.</source>
        <translation>Die Warm-up-Schritte dürfen nicht negativ sein.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="298"/>
        <source>The step schedule needs a period above 0 epochs.</source>
        <translation>Der Stufen-Zeitplan braucht eine Periode von mehr als 0 Epochen.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="301"/>
        <source>The final learning rate must be between 0 and the learning rate.</source>
        <translation>Die End-Lernrate muss zwischen 0 und der Lernrate liegen.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="305"/>
        <source>Choose auto, mpi or nccl.</source>
        <translation>Wählen Sie auto, mpi oder nccl.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="307"/>
        <source>The bucket size must be above 0 MiB.</source>
        <translation>Die Bucket-Größe muss größer als 0 MiB sein.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="309"/>
        <source>The checkpoint interval cannot be negative.</source>
        <translation>Das Prüfpunktintervall darf nicht negativ sein.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="313"/>
        <source>The metric interval must be at least 1 step (1 reports every step; got %L1).</source>
        <translation>Das Metrik-Intervall muss mindestens 1 Schritt sein (1 meldet jeden Schritt; angegeben: %L1).</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="191"/>
        <source>The hang timeout must be 0 (never) or at most %L1 s (a week).</source>
        <translation>Das Hängen-Zeitlimit muss 0 (nie) oder höchstens %L1 s (eine Woche) sein.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="79"/>
        <source>&quot;%1&quot; is not NAME=value (a name of letters, digits and _).</source>
        <translation>„%1“ ist kein NAME=Wert (ein Name aus Buchstaben, Ziffern und _).</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="85"/>
        <source>%1 is set by the agent for every run; remove it.</source>
        <translation>%1 setzt der Agent für jeden Lauf; entfernen Sie es.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="137"/>
        <source>%1 has no GPU; uncheck &quot;Use GPUs&quot; to run the script on its CPU cores, or choose a GPU node.</source>
        <translation>%1 hat keine GPU; schalten Sie „GPUs verwenden“ aus, um das Skript auf seinen CPU-Kernen auszuführen, oder wählen Sie einen GPU-Knoten.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="140"/>
        <source>%1 has no GPU; choose the MPI (CPU) backend or a GPU node.</source>
        <translation>%1 hat keine GPU; wählen Sie das MPI-Backend (CPU) oder einen GPU-Knoten.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="166"/>
        <source>Only %L1 GPUs are free on %2 (one per rank); choose at most %L1 ranks per node, or stop a run that holds GPUs there.</source>
        <translation>Auf %2 sind nur %L1 GPUs frei (eine je Rang); wählen Sie höchstens %L1 Ränge je Knoten oder beenden Sie einen Lauf, der dort GPUs belegt.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="170"/>
        <source>Only %L1 CPU slots are free on %2; choose at most %L1 ranks per node.</source>
        <translation>Auf %2 sind nur %L1 CPU-Slots frei; wählen Sie höchstens %L1 Ränge je Knoten.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="197"/>
        <source>Enter the path of the script on the nodes, e.g. /srv/train/ddp_fashion_mnist.py.</source>
        <translation>Geben Sie den Pfad des Skripts auf den Knoten ein, z. B. /srv/train/ddp_fashion_mnist.py.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="200"/>
        <source>Give an absolute path, or a working directory the script is in.</source>
        <translation>Geben Sie einen absoluten Pfad an oder ein Arbeitsverzeichnis, in dem das Skript liegt.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="203"/>
        <source>Enter the Python interpreter, e.g. /usr/bin/python3.</source>
        <translation>Geben Sie den Python-Interpreter ein, z. B. /usr/bin/python3.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="329"/>
        <source>%1.</source>
        <translation>%1.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="342"/>
        <source>The run is too large to send: %1. Shorten it.</source>
        <translation>Der Lauf ist zu groß zum Senden: %1. Kürzen Sie ihn.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="574"/>
        <source>This file is not a Ringside run preset.</source>
        <translation>Diese Datei ist keine Ringside-Laufvorlage.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="578"/>
        <source>Preset version %1 is not supported (this Ringside reads version %2).</source>
        <translation>Vorlagenversion %1 wird nicht unterstützt (dieses Ringside liest Version %2).</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="590"/>
        <source>The preset&apos;s &quot;python&quot; entry must be an object.</source>
        <translation>Der Eintrag „python“ der Vorlage muss ein Objekt sein.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="601"/>
        <source>The preset&apos;s &quot;trainer&quot; entry must be an object.</source>
        <translation>Der Eintrag „trainer“ der Vorlage muss ein Objekt sein.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="610"/>
        <source>The preset&apos;s run spec is not valid: %1</source>
        <translation>Die Laufspezifikation der Vorlage ist ungültig: %1</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="624"/>
        <source>The preset&apos;s &quot;nodes&quot; entry must be a list of node ids.</source>
        <translation>Der Eintrag „nodes“ der Vorlage muss eine Liste von Knoten-IDs sein.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/local_cluster.cpp" line="24"/>
        <source>Start the cluster with `sudo scripts/local-cluster up 3` (it writes the file), or pass the file it printed: ringside --local-cluster FILE.</source>
        <translation>Starten Sie den Cluster mit `sudo scripts/local-cluster up 3` (das schreibt die Datei) oder geben Sie die Datei an, die es ausgegeben hat: ringside --local-cluster DATEI.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/local_cluster.cpp" line="55"/>
        <source>not valid JSON (%1 at offset %2)</source>
        <translation>kein gültiges JSON (%1 bei Position %2)</translation>
    </message>
    <message>
        <location filename="../gui/core/src/local_cluster.cpp" line="57"/>
        <source>not a JSON object</source>
        <translation>kein JSON-Objekt</translation>
    </message>
    <message>
        <location filename="../gui/core/src/local_cluster.cpp" line="61"/>
        <source>no &quot;nodes&quot; list</source>
        <translation>keine Liste „nodes“</translation>
    </message>
    <message>
        <location filename="../gui/core/src/local_cluster.cpp" line="64"/>
        <source>%1 nodes, more than the %2 Ringside takes</source>
        <translation>%1 Knoten, mehr als die %2, die Ringside annimmt</translation>
    </message>
    <message>
        <location filename="../gui/core/src/local_cluster.cpp" line="80"/>
        <source>node %1</source>
        <translation>Knoten %1</translation>
    </message>
    <message>
        <location filename="../gui/core/src/local_cluster.cpp" line="83"/>
        <source>%1 has no &quot;%2&quot;</source>
        <translation>%1 hat kein „%2“</translation>
    </message>
    <message>
        <location filename="../gui/core/src/local_cluster.cpp" line="87"/>
        <source>two nodes are named %1</source>
        <translation>zwei Knoten heißen %1</translation>
    </message>
    <message>
        <location filename="../gui/core/src/local_cluster.cpp" line="93"/>
        <source>the &quot;control&quot; endpoint of %1 is not tcp://HOST:PORT: &quot;%2&quot;</source>
        <translation>der Endpunkt „control“ von %1 hat nicht die Form tcp://HOST:PORT: „%2“</translation>
    </message>
    <message>
        <location filename="../gui/core/src/local_cluster.cpp" line="97"/>
        <source>the &quot;events&quot; endpoint of %1 is not tcp://HOST:PORT: &quot;%2&quot;</source>
        <translation>der Endpunkt „events“ von %1 hat nicht die Form tcp://HOST:PORT: „%2“</translation>
    </message>
    <message>
        <location filename="../gui/core/src/local_cluster.cpp" line="101"/>
        <source>the &quot;control&quot; and &quot;events&quot; endpoints of %1 name different hosts (%2, %3)</source>
        <translation>die Endpunkte „control“ und „events“ von %1 nennen verschiedene Hosts (%2, %3)</translation>
    </message>
    <message>
        <location filename="../gui/core/src/local_cluster.cpp" line="107"/>
        <source>the &quot;agent_public_key&quot; of %1 is not a CURVE key (40 Z85 characters)</source>
        <translation>„agent_public_key“ von %1 ist kein CURVE-Schlüssel (40 Z85-Zeichen)</translation>
    </message>
    <message>
        <location filename="../gui/core/src/local_cluster.cpp" line="115"/>
        <source>no &quot;client_secret_key_file&quot;</source>
        <translation>kein „client_secret_key_file“</translation>
    </message>
    <message>
        <location filename="../gui/core/src/local_cluster.cpp" line="119"/>
        <source>the &quot;client_public_key&quot; is not a CURVE key (40 Z85 characters)</source>
        <translation>„client_public_key“ ist kein CURVE-Schlüssel (40 Z85-Zeichen)</translation>
    </message>
    <message>
        <location filename="../gui/core/src/local_cluster.cpp" line="128"/>
        <source>%1 does not exist: no local cluster is up. %2</source>
        <translation>%1 existiert nicht: Es läuft kein lokaler Cluster. %2</translation>
    </message>
    <message>
        <location filename="../gui/core/src/local_cluster.cpp" line="132"/>
        <source>Cannot read %1 (%2): run ringside as a user who may read it (root for a local cluster).</source>
        <translation>%1 kann nicht gelesen werden (%2): Starten Sie ringside als ein Benutzer, der die Datei lesen darf (root bei einem lokalen Cluster).</translation>
    </message>
    <message>
        <location filename="../gui/core/src/local_cluster.cpp" line="138"/>
        <source>%L1 bytes, more than a cluster description has</source>
        <translation>%L1 Bytes, mehr als eine Cluster-Beschreibung hat</translation>
    </message>
    <message>
        <location filename="../gui/core/src/local_cluster.cpp" line="146"/>
        <source>The local cluster&apos;s client key cannot be used: %1. %2</source>
        <translation>Der Client-Schlüssel des lokalen Clusters kann nicht verwendet werden: %1. %2</translation>
    </message>
    <message>
        <location filename="../gui/core/src/local_cluster.cpp" line="161"/>
        <source>The client key in %1 is not the cluster&apos;s client key %2 (the file is from another cluster). %3</source>
        <translation>Der Client-Schlüssel in %1 ist nicht der Client-Schlüssel %2 des Clusters (die Datei gehört zu einem anderen Cluster). %3</translation>
    </message>
    <message>
        <location filename="../gui/core/src/node_settings.cpp" line="46"/>
        <source>&quot;%1&quot; is not an IPv4 subnet: write it like 10.0.0.0/24.</source>
        <translation>„%1“ ist kein IPv4-Subnetz: Schreiben Sie es wie 10.0.0.0/24.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/node_settings.cpp" line="52"/>
        <source>&quot;%1&quot; is not a network interface name: enter one like eth1 (up to 15 letters, digits and _ . : -, not starting with -) or a subnet like 10.0.0.0/24.</source>
        <translation>„%1“ ist kein Name einer Netzwerkschnittstelle: Geben Sie einen wie eth1 ein (bis zu 15 Buchstaben, Ziffern und _ . : -, nicht mit - beginnend) oder ein Subnetz wie 10.0.0.0/24.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/node_settings.cpp" line="62"/>
        <source>mpirun options must start with an option (a word beginning with -), not &quot;%1&quot;; e.g. --mca btl_tcp_links 2.</source>
        <translation>mpirun-Optionen müssen mit einer Option beginnen (einem Wort, das mit - anfängt), nicht mit „%1“; z. B. --mca btl_tcp_links 2.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/preflight.cpp" line="27"/>
        <source>The pre-flight check got %1 answers for %2 nodes; launch again.</source>
        <translation>Die Vorabprüfung hat %1 Antworten für %2 Knoten erhalten; starten Sie erneut.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/preflight.cpp" line="41"/>
        <source>%1: runs ringside-agent %2, but the owner %3 runs %4; install the same Ringside version on every node of the run.</source>
        <translation>%1: läuft mit ringside-agent %2, der Eigentümer %3 aber mit %4; installieren Sie auf jedem Knoten des Laufs dieselbe Ringside-Version.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/preflight.cpp" line="51"/>
        <source>%1: %2 ranks need %2 free GPUs, but %3 are free; lower the ranks per node or stop a run there.</source>
        <translation>%1: %2 Ränge brauchen %2 freie GPUs, aber %3 sind frei; verringern Sie die Ränge pro Knoten oder stoppen Sie dort einen Lauf.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/preflight.cpp" line="67"/>
        <source>The pre-flight check of the nodes found problems, so nothing was launched. Fix them and launch again:</source>
        <translation>Die Vorabprüfung der Knoten hat Probleme gefunden, daher wurde nichts gestartet. Beheben Sie sie und starten Sie erneut:</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="1"/>
        <source>%1 is a Slurm cluster, which places its jobs itself: choose it alone, and give the job&apos;s nodes under Slurm job.</source>
        <translation>%1 ist ein Slurm-Cluster, der seine Jobs selbst platziert: Wählen Sie ihn allein und geben Sie die Knoten des Jobs unter Slurm-Job an.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="1"/>
        <source>partition</source>
        <translation>Partition</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="1"/>
        <source>account</source>
        <translation>Konto</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="1"/>
        <source>QOS</source>
        <translation>QOS</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="1"/>
        <source>The %1 is not a Slurm name: use up to 64 letters, digits, &apos;_&apos;, &apos;.&apos; and &apos;-&apos;.</source>
        <translation>Die Angabe „%1“ ist kein Slurm-Name: Verwenden Sie bis zu 64 Buchstaben, Ziffern, &apos;_&apos;, &apos;.&apos; und &apos;-&apos;.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_form.cpp" line="1"/>
        <source>The GPU request is one sbatch option with {n} for the GPUs per node, such as --gpus-per-node={n} or --gres=gpu:{n}.</source>
        <translation>Die GPU-Anforderung ist eine sbatch-Option mit {n} für die GPUs pro Knoten, etwa --gpus-per-node={n} oder --gres=gpu:{n}.</translation>
    </message>
</context>
<context>
    <name>ringside::gui::AddNodeDialog</name>
    <message>
        <location filename="../gui/widgets/src/add_node_dialog.cpp" line="40"/>
        <source>Edit node</source>
        <translation>Knoten bearbeiten</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/add_node_dialog.cpp" line="40"/>
        <source>Add node</source>
        <translation>Knoten hinzufügen</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/add_node_dialog.cpp" line="43"/>
        <source>Node</source>
        <translation>Knoten</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/add_node_dialog.cpp" line="46"/>
        <source>e.g. gpu01 (optional; the host when empty)</source>
        <translation>z. B. gpu01 (optional; leer: der Host)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/add_node_dialog.cpp" line="47"/>
        <source>&amp;Name:</source>
        <translation>&amp;Name:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/add_node_dialog.cpp" line="49"/>
        <source>host name or address, e.g. gpu01 or 10.0.0.5</source>
        <translation>Hostname oder Adresse, z. B. gpu01 oder 10.0.0.5</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/add_node_dialog.cpp" line="50"/>
        <source>&amp;Host:</source>
        <translation>&amp;Host:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/add_node_dialog.cpp" line="56"/>
        <source>&amp;Control port:</source>
        <translation>Steuer&amp;port:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/add_node_dialog.cpp" line="60"/>
        <source>&amp;Events port:</source>
        <translation>&amp;Ereignisport:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/add_node_dialog.cpp" line="63"/>
        <source>40 characters; on the node run: ringside-agent print-public-key</source>
        <translation>40 Zeichen; auf dem Knoten ausführen: ringside-agent print-public-key</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/add_node_dialog.cpp" line="69"/>
        <source>Agent public &amp;key:</source>
        <translation>Öffentlicher Sch&amp;lüssel des Agenten:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/add_node_dialog.cpp" line="74"/>
        <source>Launch settings</source>
        <translation>Starteinstellungen</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/add_node_dialog.cpp" line="77"/>
        <source>e.g. eth1 or 10.0.0.0/24 (optional)</source>
        <translation>z. B. eth1 oder 10.0.0.0/24 (optional)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/add_node_dialog.cpp" line="79"/>
        <source>The network interface or IPv4 subnet that MPI and NCCL use for this node&apos;s traffic with the other nodes of a run. Empty: the libraries pick one (or the agent&apos;s --network-interface). On a cluster, name the interface of the cluster network, e.g. ib0 or eth1, so that traffic does not go over a slower management network.</source>
        <translation>Die Netzwerkschnittstelle oder das IPv4-Subnetz, über das MPI und NCCL den Verkehr dieses Knotens mit den anderen Knoten eines Laufs abwickeln. Leer: Die Bibliotheken wählen selbst (oder das --network-interface des Agenten). Nennen Sie auf einem Cluster die Schnittstelle des Cluster-Netzes, z. B. ib0 oder eth1, damit der Verkehr nicht über ein langsameres Verwaltungsnetz läuft.</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/add_node_dialog.cpp" line="83"/>
        <source>Network &amp;interface:</source>
        <translation>Netzwerk-Schn&amp;ittstelle:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/add_node_dialog.cpp" line="87"/>
        <source>e.g. --mca btl_tcp_links 2 (optional)</source>
        <translation>z. B. --mca btl_tcp_links 2 (optional)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/add_node_dialog.cpp" line="89"/>
        <source>Extra mpirun options for runs this node owns (its agent starts mpirun), quoted like a shell command line, e.g. --mca plm_rsh_args &quot;-p 2222&quot;. They must start with an option. Empty: none.</source>
        <translation>Zusätzliche mpirun-Optionen für Läufe, deren Eigentümer dieser Knoten ist (sein Agent startet mpirun), in Anführungszeichen wie eine Shell-Befehlszeile, z. B. --mca plm_rsh_args &quot;-p 2222&quot;. Sie müssen mit einer Option beginnen. Leer: keine.</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/add_node_dialog.cpp" line="92"/>
        <source>mpirun &amp;options:</source>
        <translation>mpirun-&amp;Optionen:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/add_node_dialog.cpp" line="97"/>
        <source>Authorize this GUI on the node</source>
        <translation>Diese GUI auf dem Knoten autorisieren</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/add_node_dialog.cpp" line="100"/>
        <source>The agent serves only clients whose public key is in its allowlist. This GUI&apos;s public key:</source>
        <translation>Der Agent bedient nur Clients, deren öffentlicher Schlüssel in seiner Zulassungsliste steht. Öffentlicher Schlüssel dieser GUI:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/add_node_dialog.cpp" line="111"/>
        <source>&amp;Copy</source>
        <translation>&amp;Kopieren</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/add_node_dialog.cpp" line="112"/>
        <source>Copy this GUI&apos;s public key to the clipboard</source>
        <translation>Den öffentlichen Schlüssel dieser GUI in die Zwischenablage kopieren</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/add_node_dialog.cpp" line="117"/>
        <source>On the node run:</source>
        <translation>Auf dem Knoten ausführen:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/add_node_dialog.cpp" line="123"/>
        <source>Copy co&amp;mmand</source>
        <translation>Be&amp;fehl kopieren</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/add_node_dialog.cpp" line="138"/>
        <source>&amp;Save</source>
        <translation>&amp;Speichern</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/add_node_dialog.cpp" line="138"/>
        <source>&amp;Add</source>
        <translation>Hin&amp;zufügen</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/add_node_dialog.cpp" line="161"/>
        <source>This node is reached with the client key in %1 (a local cluster&apos;s, from --local-cluster), not with this GUI&apos;s key.</source>
        <translation>Dieser Knoten wird mit dem Client-Schlüssel in %1 erreicht (dem eines lokalen Clusters, aus --local-cluster), nicht mit dem Schlüssel dieser GUI.</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/add_node_dialog.cpp" line="189"/>
        <source>A host name has no spaces; enter e.g. gpu01 or 10.0.0.5.</source>
        <translation>Ein Hostname enthält keine Leerzeichen; geben Sie z. B. gpu01 oder 10.0.0.5 ein.</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/add_node_dialog.cpp" line="196"/>
        <source>Not a valid agent key (%1). Paste the 40 characters that &quot;ringside-agent print-public-key&quot; prints on the node.</source>
        <translation>Kein gültiger Agent-Schlüssel (%1). Fügen Sie die 40 Zeichen ein, die „ringside-agent print-public-key“ auf dem Knoten ausgibt.</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/add_node_dialog.cpp" line="213"/>
        <source>Enter the agent&apos;s public key.</source>
        <translation>Geben Sie den öffentlichen Schlüssel des Agenten ein.</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/add_node_dialog.cpp" line="214"/>
        <source>Enter the node&apos;s host.</source>
        <translation>Geben Sie den Host des Knotens ein.</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/add_node_dialog.cpp" line="230"/>
        <source>The node could not be saved: %1</source>
        <translation>Der Knoten konnte nicht gespeichert werden: %1</translation>
    </message>
</context>
<context>
    <name>ringside::gui::AgentConnection</name>
    <message>
        <location filename="../gui/core/src/agent_connection_worker.cpp" line="190"/>
        <source>not connected to the agent; the request was not sent</source>
        <translation>nicht mit dem Agenten verbunden; die Anfrage wurde nicht gesendet</translation>
    </message>
    <message numerus="yes">
        <location filename="../gui/core/src/agent_connection_worker.cpp" line="382"/>
        <source>sent %n message(s) over the protocol&apos;s limits (docs/protocol.md#limits), which the GUI clipped or refused; the latest: %1</source>
        <translation>
            <numerusform>hat %n Nachricht über den Grenzen des Protokolls gesendet (docs/protocol.md#limits), die die GUI gekürzt oder abgelehnt hat; die letzte: %1</numerusform>
            <numerusform>hat %n Nachrichten über den Grenzen des Protokolls gesendet (docs/protocol.md#limits), die die GUI gekürzt oder abgelehnt hat; die letzte: %1</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../gui/core/src/agent_connection_worker.cpp" line="459"/>
        <source>its agent speaks another protocol version than this GUI (%1): install the same Ringside version on the GUI&apos;s machine and every node</source>
        <translation>sein Agent spricht eine andere Protokollversion als diese GUI (%1): installieren Sie dieselbe Ringside-Version auf dem Rechner der GUI und auf jedem Knoten</translation>
    </message>
    <message>
        <location filename="../gui/core/src/agent_connection_worker.cpp" line="675"/>
        <source>the agent did not answer in time</source>
        <translation>der Agent hat nicht rechtzeitig geantwortet</translation>
    </message>
    <message>
        <location filename="../gui/core/src/agent_connection_worker.cpp" line="684"/>
        <source>the agent did not answer a catch-up request in time</source>
        <translation>der Agent hat eine Nachholanfrage nicht rechtzeitig beantwortet</translation>
    </message>
</context>
<context>
    <name>ringside::gui::BucketTimingsView</name>
    <message>
        <location filename="../gui/widgets/src/bucket_timings_view.cpp" line="23"/>
        <location filename="../gui/widgets/src/bucket_timings_view.cpp" line="29"/>
        <location filename="../gui/widgets/src/bucket_timings_view.cpp" line="137"/>
        <location filename="../gui/widgets/src/bucket_timings_view.cpp" line="145"/>
        <location filename="../gui/widgets/src/bucket_timings_view.cpp" line="174"/>
        <source>N/A</source>
        <translation>k. A.</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/bucket_timings_view.cpp" line="49"/>
        <source>All-reduce time per gradient bucket</source>
        <translation>All-Reduce-Zeit je Gradienten-Bucket</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/bucket_timings_view.cpp" line="50"/>
        <source>step</source>
        <translation>Schritt</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/bucket_timings_view.cpp" line="50"/>
        <location filename="../gui/widgets/src/bucket_timings_view.cpp" line="78"/>
        <source>all-reduce (ms)</source>
        <translation>All-Reduce (ms)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/bucket_timings_view.cpp" line="51"/>
        <source>no per-bucket timings</source>
        <translation>keine Zeiten je Bucket</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/bucket_timings_view.cpp" line="56"/>
        <source>Bucket</source>
        <translation>Bucket</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/bucket_timings_view.cpp" line="56"/>
        <source>Bytes</source>
        <translation>Bytes</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/bucket_timings_view.cpp" line="56"/>
        <source>All-reduce (ms)</source>
        <translation>All-Reduce (ms)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/bucket_timings_view.cpp" line="56"/>
        <source>algbw (GB/s)</source>
        <translation>algbw (GB/s)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/bucket_timings_view.cpp" line="56"/>
        <source>busbw (GB/s)</source>
        <translation>busbw (GB/s)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/bucket_timings_view.cpp" line="62"/>
        <source>Medians per bucket over the run (bucket 0 starts first: the last layers). All-reduce: the bucket&apos;s own duration, the smallest over ranks; algbw = bytes / duration; busbw = algbw × 2(n−1)/n (nccl-tests). Exposed: the time the step waited for communication after backward.</source>
        <translation>Mediane je Bucket über den Lauf (Bucket 0 startet zuerst: die letzten Schichten). All-Reduce: die eigene Dauer des Buckets, die kleinste über alle Ranks; algbw = Bytes / Dauer; busbw = algbw × 2(n−1)/n (nccl-tests). Sichtbar: die Zeit, die der Schritt nach dem Backward-Durchlauf auf Kommunikation wartete.</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/bucket_timings_view.cpp" line="86"/>
        <source>bucket %1 (%2)</source>
        <translation>Bucket %1 (%2)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/bucket_timings_view.cpp" line="87"/>
        <source>bucket %1</source>
        <translation>Bucket %1</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/bucket_timings_view.cpp" line="144"/>
        <source>all (sum)</source>
        <translation>alle (Summe)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/bucket_timings_view.cpp" line="150"/>
        <source>exposed</source>
        <translation>sichtbar</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/bucket_timings_view.cpp" line="168"/>
        <source>No per-bucket communication reported (a run of one rank, a custom command, or a run recorded before per-bucket metrics).</source>
        <translation>Keine Kommunikation je Bucket gemeldet (ein Lauf mit einem Rank, ein eigener Befehl oder ein Lauf von vor den Metriken je Bucket).</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/bucket_timings_view.cpp" line="172"/>
        <source>%1 gradient buckets, %2 per step; the buckets&apos; own all-reduce time %3 ms</source>
        <translation>%1 Gradienten-Buckets, %2 je Schritt; eigene All-Reduce-Zeit der Buckets %3 ms</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/bucket_timings_view.cpp" line="177"/>
        <source>; the step waited %1 ms (p90 %2 ms) for communication after backward (exposed)</source>
        <translation>; der Schritt wartete nach dem Backward-Durchlauf %1 ms (p90 %2 ms) auf Kommunikation (sichtbar)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/bucket_timings_view.cpp" line="180"/>
        <source>, %1% of the %2 ms step</source>
        <translation>, %1 % des Schritts von %2 ms</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/bucket_timings_view.cpp" line="186"/>
        <source> (medians over the run: %1 reports)</source>
        <translation> (Mediane über den Lauf: %1 Meldungen)</translation>
    </message>
</context>
<context>
    <name>ringside::gui::CompareGpuChart</name>
    <message>
        <location filename="../gui/widgets/src/compare_gpu_chart.cpp" line="31"/>
        <source>The GPU value stored with each run to compare (docs/metrics.md)</source>
        <translation>Der mit jedem Lauf gespeicherte GPU-Wert, der verglichen wird (docs/metrics.md)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_gpu_chart.cpp" line="32"/>
        <source>GPUs</source>
        <translation>GPUs</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_gpu_chart.cpp" line="36"/>
        <source>GPU &amp;value:</source>
        <translation>GPU-&amp;Wert:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_gpu_chart.cpp" line="55"/>
        <source>Utilization</source>
        <translation>Auslastung</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_gpu_chart.cpp" line="57"/>
        <source>Memory used</source>
        <translation>Belegter Speicher</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_gpu_chart.cpp" line="59"/>
        <source>Power</source>
        <translation>Leistung</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_gpu_chart.cpp" line="61"/>
        <source>Temperature</source>
        <translation>Temperatur</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_gpu_chart.cpp" line="63"/>
        <source>SM clock</source>
        <translation>SM-Takt</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_gpu_chart.cpp" line="65"/>
        <source>PCIe receive</source>
        <translation>PCIe-Empfang</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_gpu_chart.cpp" line="67"/>
        <source>PCIe transmit</source>
        <translation>PCIe-Senden</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_gpu_chart.cpp" line="69"/>
        <source>NVLink receive</source>
        <translation>NVLink-Empfang</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_gpu_chart.cpp" line="71"/>
        <source>NVLink transmit</source>
        <translation>NVLink-Senden</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_gpu_chart.cpp" line="79"/>
        <source>utilization (%)</source>
        <translation>Auslastung (%)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_gpu_chart.cpp" line="81"/>
        <source>memory used (MiB)</source>
        <translation>Belegter Speicher (MiB)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_gpu_chart.cpp" line="83"/>
        <source>power (W)</source>
        <translation>Leistung (W)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_gpu_chart.cpp" line="85"/>
        <source>temperature (°C)</source>
        <translation>Temperatur (°C)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_gpu_chart.cpp" line="87"/>
        <source>SM clock (MHz)</source>
        <translation>SM-Takt (MHz)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_gpu_chart.cpp" line="89"/>
        <source>PCIe rx (MB/s)</source>
        <translation>PCIe rx (MB/s)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_gpu_chart.cpp" line="91"/>
        <source>PCIe tx (MB/s)</source>
        <translation>PCIe tx (MB/s)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_gpu_chart.cpp" line="93"/>
        <source>NVLink rx, all links (MB/s)</source>
        <translation>NVLink rx, alle Links (MB/s)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_gpu_chart.cpp" line="95"/>
        <source>NVLink tx, all links (MB/s)</source>
        <translation>NVLink tx, alle Links (MB/s)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_gpu_chart.cpp" line="121"/>
        <source>time since start (s)</source>
        <translation>Zeit seit Start (s)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_gpu_chart.cpp" line="123"/>
        <source>Loading…</source>
        <translation>Wird geladen…</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_gpu_chart.cpp" line="183"/>
        <source>No run has this GPU value stored</source>
        <translation>Kein Lauf hat diesen GPU-Wert gespeichert</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_gpu_chart.cpp" line="188"/>
        <source>%1 GPU %2</source>
        <translation>%1 GPU %2</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_gpu_chart.cpp" line="190"/>
        <source>rank %1&apos;s node</source>
        <translation>Knoten von Rank %1</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_gpu_chart.cpp" line="199"/>
        <source>%1 %2 GPU %3</source>
        <translation>%1 %2 GPU %3</translation>
    </message>
</context>
<context>
    <name>ringside::gui::CompareMetricChart</name>
    <message>
        <location filename="../gui/widgets/src/compare_metric_chart.cpp" line="36"/>
        <source>Any metric the compared runs logged (docs/metrics.md, docs/pytorch.md)</source>
        <translation>Jede Metrik, die die verglichenen Läufe aufgezeichnet haben (docs/metrics.md, docs/pytorch.md)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_metric_chart.cpp" line="39"/>
        <source>Metric</source>
        <translation>Metrik</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_metric_chart.cpp" line="43"/>
        <location filename="../gui/widgets/src/compare_metric_chart.cpp" line="122"/>
        <source>step</source>
        <translation>Schritt</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_metric_chart.cpp" line="44"/>
        <source>&amp;Metric:</source>
        <translation>&amp;Metrik:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_metric_chart.cpp" line="123"/>
        <source>The runs logged no metric</source>
        <translation>Die Läufe haben keine Metrik aufgezeichnet</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_metric_chart.cpp" line="123"/>
        <source>Loading…</source>
        <translation>Wird geladen…</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_metric_chart.cpp" line="135"/>
        <source>None of the runs logged this metric</source>
        <translation>Keiner der Läufe hat diese Metrik aufgezeichnet</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_metric_chart.cpp" line="154"/>
        <source>%1 (rank %2)</source>
        <translation>%1 (Rang %2)</translation>
    </message>
</context>
<context>
    <name>ringside::gui::CompareView</name>
    <message numerus="yes">
        <location filename="../gui/widgets/src/compare_view.cpp" line="75"/>
        <source>Comparing %Ln run(s)</source>
        <translation>
            <numerusform>Vergleich von %Ln Lauf</numerusform>
            <numerusform>Vergleich von %Ln Läufen</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_view.cpp" line="80"/>
        <source>Export &amp;chart</source>
        <translation>&amp;Diagramm exportieren</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_view.cpp" line="81"/>
        <source>Save one chart, as shown, as PNG or SVG</source>
        <translation>Ein Diagramm wie angezeigt als PNG oder SVG speichern</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_view.cpp" line="85"/>
        <source>Export metrics &amp;CSV…</source>
        <translation>Metriken als &amp;CSV exportieren…</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_view.cpp" line="87"/>
        <source>Write every metric sample of each run, at full resolution, to &lt;name&gt;-&lt;run id&gt;.csv in a folder</source>
        <translation>Jeden Messwert jedes Laufs in voller Auflösung nach &lt;Name&gt;-&lt;Lauf-ID&gt;.csv in einem Ordner schreiben</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_view.cpp" line="114"/>
        <location filename="../gui/widgets/src/compare_view.cpp" line="118"/>
        <location filename="../gui/widgets/src/compare_view.cpp" line="121"/>
        <source>As PNG…</source>
        <translation>Als PNG…</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_view.cpp" line="115"/>
        <location filename="../gui/widgets/src/compare_view.cpp" line="119"/>
        <location filename="../gui/widgets/src/compare_view.cpp" line="122"/>
        <source>As SVG…</source>
        <translation>Als SVG…</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_view.cpp" line="120"/>
        <source>Chosen metric</source>
        <translation>Gewählte Metrik</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_view.cpp" line="149"/>
        <source>Training loss</source>
        <translation>Trainingsverlust</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_view.cpp" line="149"/>
        <source>Test accuracy</source>
        <translation>Testgenauigkeit</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_view.cpp" line="149"/>
        <source>Throughput</source>
        <translation>Durchsatz</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_view.cpp" line="150"/>
        <source>Step time</source>
        <translation>Schrittzeit</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_view.cpp" line="151"/>
        <source>loss (nats)</source>
        <translation>Verlust (nats)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_view.cpp" line="151"/>
        <source>accuracy (%)</source>
        <translation>Genauigkeit (%)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_view.cpp" line="151"/>
        <source>samples/s</source>
        <translation>Samples/s</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_view.cpp" line="151"/>
        <source>ms</source>
        <translation>ms</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_view.cpp" line="164"/>
        <source>step</source>
        <translation>Schritt</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_view.cpp" line="166"/>
        <source>Loading…</source>
        <translation>Wird geladen…</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_view.cpp" line="184"/>
        <source>Summary</source>
        <translation>Zusammenfassung</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_view.cpp" line="196"/>
        <source>Settings</source>
        <translation>Einstellungen</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_view.cpp" line="198"/>
        <source>Show only settings that &amp;differ</source>
        <translation>Nur &amp;abweichende Einstellungen anzeigen</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_view.cpp" line="224"/>
        <source>Could not read run %1: %2</source>
        <translation>Lauf %1 konnte nicht gelesen werden: %2</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_view.cpp" line="272"/>
        <source>%1 (%2)</source>
        <translation>%1 (%2)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_view.cpp" line="288"/>
        <source>No data</source>
        <translation>Keine Daten</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_view.cpp" line="294"/>
        <source>State</source>
        <translation>Status</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_view.cpp" line="294"/>
        <source>Nodes × ranks</source>
        <translation>Knoten × Ränge</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_view.cpp" line="294"/>
        <source>Final loss</source>
        <translation>Endverlust</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_view.cpp" line="295"/>
        <source>Best accuracy</source>
        <translation>Beste Genauigkeit</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_view.cpp" line="295"/>
        <source>Samples/s</source>
        <translation>Samples/s</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_view.cpp" line="295"/>
        <source>Duration</source>
        <translation>Dauer</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_view.cpp" line="296"/>
        <source>Samples stored</source>
        <translation>Gespeicherte Messwerte</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_view.cpp" line="314"/>
        <source>N/A</source>
        <translation>k. A.</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_view.cpp" line="339"/>
        <source>%1 %</source>
        <translation>%1 %</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/compare_view.cpp" line="371"/>
        <source>The runs differ in this setting</source>
        <translation>Die Läufe unterscheiden sich in dieser Einstellung</translation>
    </message>
</context>
<context>
    <name>ringside::gui::Controller</name>
    <message>
        <location filename="../gui/core/src/controller.cpp" line="61"/>
        <source>Cannot open the run database %1: %2. To keep the run history in another folder, start Ringside with --data-dir.</source>
        <translation>Die Laufdatenbank %1 kann nicht geöffnet werden: %2. Um den Laufverlauf in einem anderen Ordner zu führen, starten Sie Ringside mit --data-dir.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/controller.cpp" line="68"/>
        <source>Cannot read the nodes from the run database %1: %2</source>
        <translation>Die Knoten können nicht aus der Laufdatenbank %1 gelesen werden: %2</translation>
    </message>
    <message>
        <location filename="../gui/core/src/controller.cpp" line="75"/>
        <source>Cannot read the run history: %1</source>
        <translation>Der Laufverlauf kann nicht gelesen werden: %1</translation>
    </message>
    <message>
        <location filename="../gui/core/src/controller.cpp" line="134"/>
        <source>%1 (this workstation)</source>
        <translation>%1 (dieser Arbeitsplatz)</translation>
    </message>
    <message>
        <location filename="../gui/core/src/controller.cpp" line="157"/>
        <source>The local agent could not start: %1</source>
        <translation>Der lokale Agent konnte nicht starten: %1</translation>
    </message>
    <message>
        <location filename="../gui/core/src/controller.cpp" line="171"/>
        <source>Node %1 cannot be connected: %2</source>
        <translation>Knoten %1 kann nicht verbunden werden: %2</translation>
    </message>
    <message>
        <location filename="../gui/core/src/controller.cpp" line="197"/>
        <location filename="../gui/core/src/controller.cpp" line="239"/>
        <source>Node %1: %2</source>
        <translation>Knoten %1: %2</translation>
    </message>
    <message>
        <location filename="../gui/core/src/controller.cpp" line="221"/>
        <source>Storing the runs of node %1 failed: %2</source>
        <translation>Die Läufe des Knotens %1 konnten nicht gespeichert werden: %2</translation>
    </message>
    <message>
        <location filename="../gui/core/src/controller.cpp" line="312"/>
        <source>Storing GPU telemetry of node %1 failed: %2</source>
        <translation>Speichern der GPU-Telemetrie von Knoten %1 fehlgeschlagen: %2</translation>
    </message>
    <message>
        <location filename="../gui/core/src/controller.cpp" line="325"/>
        <source>Storing data of run %1 failed: %2</source>
        <translation>Speichern der Daten von Lauf %1 fehlgeschlagen: %2</translation>
    </message>
    <message>
        <location filename="../gui/core/src/controller.cpp" line="429"/>
        <source>Cannot add node %1 of the local cluster: %2</source>
        <translation>Knoten %1 des lokalen Clusters kann nicht hinzugefügt werden: %2</translation>
    </message>
    <message>
        <location filename="../gui/core/src/controller_launch.cpp" line="82"/>
        <source>Choose at least one node to run on (add nodes under Nodes).</source>
        <translation>Wählen Sie mindestens einen Knoten für den Lauf (Knoten fügen Sie unter „Knoten“ hinzu).</translation>
    </message>
    <message>
        <location filename="../gui/core/src/controller_launch.cpp" line="91"/>
        <location filename="../gui/core/src/controller_launch.cpp" line="188"/>
        <source>Node %1 is not connected.</source>
        <translation>Knoten %1 ist nicht verbunden.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/controller_launch.cpp" line="96"/>
        <source>Node %1 is not known (removed?); choose another node.</source>
        <translation>Knoten %1 ist unbekannt (entfernt?); wählen Sie einen anderen Knoten.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/controller_launch.cpp" line="108"/>
        <source>Node %1 is not online, so the run cannot start on it: wait until it is online (Nodes) or choose another node.</source>
        <translation>Knoten %1 ist nicht online, daher kann der Lauf dort nicht starten: Warten Sie, bis er online ist (Knoten), oder wählen Sie einen anderen Knoten.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/controller_launch.cpp" line="120"/>
        <source>Run %1 is not known to a connected node: connect its node (Nodes), then resume it.</source>
        <translation>Lauf %1 ist keinem verbundenen Knoten bekannt: Verbinden Sie seinen Knoten (Knoten) und setzen Sie ihn dann fort.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/controller_launch.cpp" line="124"/>
        <source>Only a trainer run that was stopped, or that failed with periodic checkpoints on, has a checkpoint to resume from.</source>
        <translation>Nur ein Trainer-Lauf, der gestoppt wurde oder mit regelmäßigen Prüfpunkten fehlschlug, hat einen Prüfpunkt, an dem er fortgesetzt werden kann.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/controller_launch.cpp" line="132"/>
        <source>Node %1, which holds the run&apos;s checkpoints, is not online: wait until it is (Nodes), then resume the run.</source>
        <translation>Knoten %1, der die Prüfpunkte des Laufs hält, ist nicht online: Warten Sie, bis er es ist (Knoten), und setzen Sie den Lauf dann fort.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/controller_launch.cpp" line="154"/>
        <source>Run %1 cannot be resumed: %2</source>
        <translation>Lauf %1 kann nicht fortgesetzt werden: %2</translation>
    </message>
    <message>
        <location filename="../gui/core/src/controller_launch.cpp" line="168"/>
        <source>Not every host of run %1 is a known node (it ran on %2): add the missing nodes under Nodes, then resume it.</source>
        <translation>Nicht jeder Host von Lauf %1 ist ein bekannter Knoten (er lief auf %2): Fügen Sie die fehlenden Knoten unter Knoten hinzu und setzen Sie ihn dann fort.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/controller_launch.cpp" line="176"/>
        <source>Node %1 is not online, so the run cannot be resumed on it: wait until it is online (Nodes).</source>
        <translation>Knoten %1 ist nicht online, daher kann der Lauf dort nicht fortgesetzt werden: Warten Sie, bis er online ist (Knoten).</translation>
    </message>
    <message>
        <location filename="../gui/core/src/controller_launch.cpp" line="220"/>
        <source>%1 did not answer the pre-flight check within %2 s, so nothing was launched: check that the node&apos;s agent runs and is reachable (Nodes), then launch again.</source>
        <translation>%1 hat auf die Vorabprüfung nicht innerhalb von %2 s geantwortet, daher wurde nichts gestartet: Prüfen Sie, ob der Agent des Knotens läuft und erreichbar ist (Knoten), und starten Sie dann erneut.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/controller_launch.cpp" line="244"/>
        <source>the reply was not a pre-flight answer</source>
        <translation>die Antwort war keine Antwort auf die Vorabprüfung</translation>
    </message>
    <message>
        <location filename="../gui/core/src/controller_launch.cpp" line="245"/>
        <source>The pre-flight check on %1 failed, so nothing was launched: %2. Check that the node runs the same Ringside version as the others.</source>
        <translation>Die Vorabprüfung auf %1 ist fehlgeschlagen, daher wurde nichts gestartet: %2. Prüfen Sie, ob auf dem Knoten dieselbe Ringside-Version läuft wie auf den anderen.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/controller_launch.cpp" line="272"/>
        <source>The node of run %1 is not connected.</source>
        <translation>Der Knoten von Lauf %1 ist nicht verbunden.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/controller_launch.cpp" line="301"/>
        <source>%1 could not stop the run&apos;s ranks there: %2</source>
        <translation>%1 konnte die Ränge des Laufs dort nicht stoppen: %2</translation>
    </message>
    <message>
        <location filename="../gui/core/src/controller_launch.cpp" line="326"/>
        <source>The pre-flight check could not reach %1, so nothing was launched: %2. Check that the node is online (Nodes), then launch again.</source>
        <translation>Die Vorabprüfung konnte %1 nicht erreichen, daher wurde nichts gestartet: %2. Prüfen Sie, ob der Knoten online ist (Knoten), und starten Sie dann erneut.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/controller_launch.cpp" line="336"/>
        <source>%1 could not be asked to stop the run&apos;s ranks there: %2. The owner&apos;s mpirun stops them as well; check the node once it is reachable.</source>
        <translation>%1 konnte nicht gebeten werden, die Ränge des Laufs dort zu stoppen: %2. Das mpirun des Eigentümers stoppt sie ebenfalls; prüfen Sie den Knoten, sobald er erreichbar ist.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/controller_queue.cpp" line="1"/>
        <source>%1 did not answer, so run %2 may not have moved: %3</source>
        <translation>%1 hat nicht geantwortet, daher wurde Lauf %2 womöglich nicht verschoben: %3</translation>
    </message>
    <message>
        <location filename="../gui/core/src/controller_queue.cpp" line="1"/>
        <source>%1 did not move run %2: %3</source>
        <translation>%1 hat Lauf %2 nicht verschoben: %3</translation>
    </message>
    <message>
        <location filename="../gui/core/src/controller_queue.cpp" line="1"/>
        <source>The node of run %1 is not connected, so its queue cannot be changed now. Try again when the node is online (Nodes).</source>
        <translation>Der Knoten von Lauf %1 ist nicht verbunden, daher kann seine Warteschlange jetzt nicht geändert werden. Versuchen Sie es erneut, wenn der Knoten online ist (Knoten).</translation>
    </message>
</context>
<context>
    <name>ringside::gui::CustomMetricsPanel</name>
    <message>
        <location filename="../gui/widgets/src/custom_metrics_panel.cpp" line="23"/>
        <source>No other metrics yet. Every value the run logs under a name the other pages do not chart (with ringside.log() in a PyTorch script, or printed by a custom command) gets a chart here, grouped by the part of its name before &quot;/&quot;.</source>
        <translation>Noch keine weiteren Metriken. Jeder Wert, den der Lauf unter einem Namen aufzeichnet, den die anderen Seiten nicht zeigen (mit ringside.log() in einem PyTorch-Skript oder von einem eigenen Befehl ausgegeben), erhält hier ein Diagramm, gruppiert nach dem Teil seines Namens vor „/“.</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/custom_metrics_panel.cpp" line="91"/>
        <source>Other</source>
        <translation>Sonstige</translation>
    </message>
    <message numerus="yes">
        <location filename="../gui/widgets/src/custom_metrics_panel.cpp" line="112"/>
        <source>%Ln more metric(s) not charted (at most %1 per run); export the run&apos;s metrics as CSV for all of them.</source>
        <translation>
            <numerusform>%Ln weitere Metrik nicht dargestellt (höchstens %1 je Lauf); exportieren Sie die Metriken des Laufs als CSV, um alle zu erhalten.</numerusform>
            <numerusform>%Ln weitere Metriken nicht dargestellt (höchstens %1 je Lauf); exportieren Sie die Metriken des Laufs als CSV, um alle zu erhalten.</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/custom_metrics_panel.cpp" line="172"/>
        <source>rank %1</source>
        <translation>Rang %1</translation>
    </message>
</context>
<context>
    <name>ringside::gui::DashboardTab</name>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="53"/>
        <source>queued</source>
        <translation>wartend</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="55"/>
        <source>starting</source>
        <translation>startet</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="57"/>
        <source>running</source>
        <translation>läuft</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="59"/>
        <source>completed</source>
        <translation>fertig</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="61"/>
        <source>failed</source>
        <translation>fehlgeschlagen</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="63"/>
        <source>stopped</source>
        <translation>gestoppt</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="65"/>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="125"/>
        <source>unknown</source>
        <translation>unbekannt</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="75"/>
        <source>train loss (raw)</source>
        <translation>Trainingsverlust (roh)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="76"/>
        <source>train loss</source>
        <translation>Trainingsverlust</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="77"/>
        <source>test loss</source>
        <translation>Testverlust</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="101"/>
        <source>Stop failed: %1</source>
        <translation>Stoppen fehlgeschlagen: %1</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="136"/>
        <source>No rank has made progress for the stall threshold: the ranks named are the ones the others wait for. The run fails when this lasts for its hang timeout (docs/metrics.md, Hangs).</source>
        <translation>Kein Rang hat innerhalb der Stockungsschwelle Fortschritt gemacht: die genannten Ränge sind die, auf die die anderen warten. Der Lauf schlägt fehl, wenn dies so lange anhält wie sein Hängen-Zeitlimit (docs/metrics.md, Hangs).</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="140"/>
        <source>&amp;Stop run</source>
        <translation>Lauf &amp;stoppen</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="141"/>
        <source>Stop the run: its ranks checkpoint and exit</source>
        <translation>Den Lauf stoppen: seine Ränge schreiben einen Prüfpunkt und beenden sich</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="143"/>
        <source>Res&amp;ume</source>
        <translation>&amp;Fortsetzen</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="145"/>
        <source>Start a new run that continues this one from its last checkpoint, on the same node</source>
        <translation>Einen neuen Lauf starten, der diesen ab seinem letzten Prüfpunkt fortsetzt, auf demselben Knoten</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="155"/>
        <source>State:</source>
        <translation>Status:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="158"/>
        <source>Elapsed:</source>
        <translation>Verstrichen:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="161"/>
        <source>ETA:</source>
        <translation>Restzeit:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="171"/>
        <source>Step</source>
        <translation>Schritt</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="171"/>
        <source>Epoch</source>
        <translation>Epoche</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="171"/>
        <source>Wall time</source>
        <translation>Laufzeit</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="172"/>
        <source>What the x axis of the training charts shows</source>
        <translation>Was die x-Achse der Trainingsdiagramme zeigt</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="173"/>
        <source>Log &amp;x</source>
        <translation>Log. &amp;x</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="174"/>
        <source>Log &amp;y</source>
        <translation>Log. &amp;y</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="179"/>
        <source>Exponential moving average weight of the train loss line</source>
        <translation>Gewicht des exponentiellen gleitenden Mittels (EMA) der Trainingsverlustkurve</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="181"/>
        <source>&amp;Reset zoom</source>
        <translation>Zoom &amp;zurücksetzen</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="183"/>
        <source>Zoom: drag a rectangle or use the wheel; pan: right-drag or arrow keys; reset: double-click; export: right-click a chart</source>
        <translation>Zoomen: Rechteck aufziehen oder Mausrad; Verschieben: mit rechter Maustaste ziehen oder Pfeiltasten; Zurücksetzen: Doppelklick; Export: Rechtsklick auf ein Diagramm</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="186"/>
        <source>Export c&amp;hart</source>
        <translation>Dia&amp;gramm exportieren</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="187"/>
        <source>Save one chart, as shown, as PNG or SVG</source>
        <translation>Ein Diagramm wie angezeigt als PNG oder SVG speichern</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="190"/>
        <source>Export metrics CS&amp;V…</source>
        <translation>Metriken als CS&amp;V exportieren…</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="192"/>
        <source>Write every metric sample of the run, every rank, at full resolution to a CSV file</source>
        <translation>Jeden Metrikwert des Laufs, aller Ranks, in voller Auflösung in eine CSV-Datei schreiben</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="195"/>
        <source>X axis:</source>
        <translation>x-Achse:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="200"/>
        <source>Smoothing:</source>
        <translation>Glättung:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="208"/>
        <source>Loss</source>
        <translation>Verlust</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="209"/>
        <source>Test accuracy</source>
        <translation>Testgenauigkeit</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="210"/>
        <source>Throughput</source>
        <translation>Durchsatz</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="211"/>
        <source>Step time</source>
        <translation>Schrittzeit</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="213"/>
        <source>All-reduce time</source>
        <translation>All-Reduce-Zeit</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="214"/>
        <source>All-reduce bus bandwidth</source>
        <translation>All-Reduce-Busbandbreite</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="249"/>
        <source>&amp;Metrics</source>
        <translation>&amp;Metriken</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="309"/>
        <source>time since start (s)</source>
        <translation>Zeit seit Start (s)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="216"/>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="315"/>
        <source>accuracy</source>
        <translation>Genauigkeit</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="217"/>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="314"/>
        <source>loss (nats)</source>
        <translation>Verlust (nats)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="218"/>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="316"/>
        <location filename="../gui/widgets/src/dashboard_tab_data.cpp" line="150"/>
        <source>samples/s</source>
        <translation>Samples/s</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="219"/>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="220"/>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="317"/>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="318"/>
        <source>ms per step</source>
        <translation>ms pro Schritt</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="221"/>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="319"/>
        <source>busbw (GB/s)</source>
        <translation>Busbandbreite (GB/s)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="225"/>
        <source>As PNG…</source>
        <translation>Als PNG…</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="226"/>
        <source>As SVG…</source>
        <translation>Als SVG…</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="228"/>
        <source>Export the run&apos;s metrics as CSV…</source>
        <translation>Metriken des Laufs als CSV exportieren…</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="247"/>
        <source>&amp;Training</source>
        <translation>&amp;Training</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="248"/>
        <source>&amp;GPUs</source>
        <translation>&amp;GPUs</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="260"/>
        <source>Per rank</source>
        <translation>Pro Rang</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="261"/>
        <source>Per bucket</source>
        <translation>Je Bucket</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="262"/>
        <source>Log</source>
        <translation>Protokoll</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="309"/>
        <source>step</source>
        <translation>Schritt</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="309"/>
        <source>epoch</source>
        <translation>Epoche</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="389"/>
        <source>resumed from %1</source>
        <translation>fortgesetzt von %1</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab_data.cpp" line="148"/>
        <source>test accuracy</source>
        <translation>Testgenauigkeit</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab_data.cpp" line="152"/>
        <source>compute</source>
        <translation>Berechnung</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab_data.cpp" line="153"/>
        <source>exposed communication</source>
        <translation>nicht überlappte Kommunikation</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab_data.cpp" line="155"/>
        <source>all-reduce</source>
        <translation>All-Reduce</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab_data.cpp" line="157"/>
        <source>busbw</source>
        <translation>Busbandbreite</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="401"/>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="402"/>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="413"/>
        <source>N/A</source>
        <translation>k. A.</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="408"/>
        <source>done</source>
        <translation>fertig</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="446"/>
        <source>Start a new run that continues this one from its last checkpoint (%1 on its node)</source>
        <translation>Einen neuen Lauf starten, der diesen ab seinem letzten Prüfpunkt fortsetzt (%1 auf seinem Knoten)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="461"/>
        <source>Stop run</source>
        <translation>Lauf stoppen</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/dashboard_tab.cpp" line="462"/>
        <source>Stop the run &quot;%1&quot;? Its ranks write a checkpoint and exit.</source>
        <translation>Den Lauf „%1“ stoppen? Seine Ränge schreiben einen Prüfpunkt und beenden sich.</translation>
    </message>
</context>
<context>
    <name>ringside::gui::HistoryPanel</name>
    <message>
        <location filename="../gui/widgets/src/history_panel.cpp" line="73"/>
        <source>Filter by name, run id, tags or notes</source>
        <translation>Nach Name, Lauf-ID, Tags oder Notizen filtern</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/history_panel.cpp" line="77"/>
        <source>Show only runs whose name, id, tags or notes contain this</source>
        <translation>Nur Läufe anzeigen, deren Name, ID, Tags oder Notizen diesen Text enthalten</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/history_panel.cpp" line="79"/>
        <source>All states</source>
        <translation>Alle Status</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/history_panel.cpp" line="80"/>
        <source>Running</source>
        <translation>Laufend</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/history_panel.cpp" line="81"/>
        <source>Completed</source>
        <translation>Fertig</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/history_panel.cpp" line="82"/>
        <source>Failed</source>
        <translation>Fehlgeschlagen</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/history_panel.cpp" line="83"/>
        <source>Stopped</source>
        <translation>Gestoppt</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/history_panel.cpp" line="85"/>
        <source>Show only runs in this state (Running includes queued and starting runs)</source>
        <translation>Nur Läufe in diesem Status anzeigen (Laufend schließt wartende und startende Läufe ein)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/history_panel.cpp" line="87"/>
        <source>&amp;Filter:</source>
        <translation>&amp;Filter:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/history_panel.cpp" line="89"/>
        <source>&amp;State:</source>
        <translation>S&amp;tatus:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/history_panel.cpp" line="119"/>
        <source>&amp;Open</source>
        <translation>&amp;Öffnen</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/history_panel.cpp" line="120"/>
        <source>Open the run&apos;s dashboard; or double-click a row</source>
        <translation>Das Dashboard des Laufs öffnen; oder eine Zeile doppelklicken</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/history_panel.cpp" line="121"/>
        <source>C&amp;lone</source>
        <translation>&amp;Klonen</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/history_panel.cpp" line="123"/>
        <source>Fill the run setup form with this run&apos;s settings</source>
        <translation>Das Einrichtungsformular mit den Einstellungen dieses Laufs füllen</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/history_panel.cpp" line="124"/>
        <source>&amp;Resume</source>
        <translation>Fo&amp;rtsetzen</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/history_panel.cpp" line="126"/>
        <location filename="../gui/widgets/src/history_panel.cpp" line="280"/>
        <source>Start a new run that continues the selected stopped or failed run from its last checkpoint, on the same node</source>
        <translation>Einen neuen Lauf starten, der den ausgewählten gestoppten oder fehlgeschlagenen Lauf ab seinem letzten Prüfpunkt fortsetzt, auf demselben Knoten</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/history_panel.cpp" line="128"/>
        <source>Co&amp;mpare</source>
        <translation>&amp;Vergleichen</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/history_panel.cpp" line="129"/>
        <source>Compare two or more selected runs</source>
        <translation>Zwei oder mehr ausgewählte Läufe vergleichen</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/history_panel.cpp" line="130"/>
        <source>E&amp;xport CSV…</source>
        <translation>CSV e&amp;xportieren…</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/history_panel.cpp" line="132"/>
        <source>Write every metric sample of the selected runs to CSV</source>
        <translation>Jeden Messwert der ausgewählten Läufe als CSV schreiben</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/history_panel.cpp" line="133"/>
        <source>&amp;Delete…</source>
        <translation>&amp;Löschen…</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/history_panel.cpp" line="135"/>
        <source>Delete the selected runs with their metrics and logs</source>
        <translation>Die ausgewählten Läufe samt Metriken und Protokollen löschen</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/history_panel.cpp" line="287"/>
        <source>Resumed from %1</source>
        <translation>Fortgesetzt von %1</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/history_panel.cpp" line="289"/>
        <source>Resumed from %1 (%2)</source>
        <translation>Fortgesetzt von %1 (%2)</translation>
    </message>
    <message numerus="yes">
        <location filename="../gui/widgets/src/history_panel.cpp" line="297"/>
        <source>%Ln run(s)</source>
        <translation>
            <numerusform>%Ln Lauf</numerusform>
            <numerusform>%Ln Läufe</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../gui/widgets/src/history_panel.cpp" line="298"/>
        <source>%1 of %Ln run(s)</source>
        <translation>
            <numerusform>%1 von %Ln Lauf</numerusform>
            <numerusform>%1 von %Ln Läufen</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../gui/widgets/src/history_panel.cpp" line="363"/>
        <source>Delete %Ln runs with all their metrics and log lines? This cannot be undone.</source>
        <translation>
            <numerusform>%Ln Lauf samt allen Metriken und Protokollzeilen löschen? Dies kann nicht rückgängig gemacht werden.</numerusform>
            <numerusform>%Ln Läufe samt allen Metriken und Protokollzeilen löschen? Dies kann nicht rückgängig gemacht werden.</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/history_panel.cpp" line="314"/>
        <source>Clone run</source>
        <translation>Lauf klonen</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/history_panel.cpp" line="315"/>
        <source>The settings of run %1 are not known yet: its node has not reported them. Connect the node that ran it and try again.</source>
        <translation>Die Einstellungen von Lauf %1 sind noch nicht bekannt: Sein Knoten hat sie nicht gemeldet. Verbinden Sie den Knoten, auf dem er lief, und versuchen Sie es erneut.</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/history_panel.cpp" line="355"/>
        <location filename="../gui/widgets/src/history_panel.cpp" line="365"/>
        <source>Delete runs</source>
        <translation>Läufe löschen</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/history_panel.cpp" line="356"/>
        <source>Stop these runs before deleting them: %1</source>
        <translation>Stoppen Sie diese Läufe, bevor Sie sie löschen: %1</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/history_panel.cpp" line="361"/>
        <source>Delete run &quot;%1&quot; with all its metrics and log lines? This cannot be undone.</source>
        <translation>Lauf „%1“ samt allen Metriken und Protokollzeilen löschen? Dies kann nicht rückgängig gemacht werden.</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/history_panel.cpp" line="374"/>
        <source>Could not delete run %1: %2</source>
        <translation>Lauf %1 konnte nicht gelöscht werden: %2</translation>
    </message>
</context>
<context>
    <name>ringside::gui::LocalAgent</name>
    <message>
        <location filename="../gui/core/src/local_agent.cpp" line="87"/>
        <source>ringside-agent not found (looked beside %1, in its build tree and on PATH): install ringside-agent or add a node by address</source>
        <translation>ringside-agent nicht gefunden (gesucht neben %1, in dessen Build-Verzeichnis und im PATH): Installieren Sie ringside-agent oder fügen Sie einen Knoten über seine Adresse hinzu</translation>
    </message>
    <message>
        <location filename="../gui/core/src/local_agent.cpp" line="93"/>
        <source>local agent: a state directory and the GUI&apos;s public key (40 characters) are needed</source>
        <translation>lokaler Agent: Ein Zustandsverzeichnis und der öffentliche Schlüssel der GUI (40 Zeichen) werden benötigt</translation>
    </message>
    <message>
        <location filename="../gui/core/src/local_agent.cpp" line="99"/>
        <source>cannot create the local agent&apos;s state directory %1</source>
        <translation>das Zustandsverzeichnis %1 des lokalen Agenten kann nicht angelegt werden</translation>
    </message>
    <message>
        <location filename="../gui/core/src/local_agent.cpp" line="146"/>
        <source>ringside-agent %1 did not finish within %2 s</source>
        <translation>ringside-agent %1 wurde nicht innerhalb von %2 s beendet</translation>
    </message>
    <message>
        <location filename="../gui/core/src/local_agent.cpp" line="157"/>
        <source>ringside-agent %1 failed (exit code %2): %3</source>
        <translation>ringside-agent %1 fehlgeschlagen (Exit-Code %2): %3</translation>
    </message>
    <message>
        <location filename="../gui/core/src/local_agent.cpp" line="165"/>
        <source>cannot run %1 (%2): %3</source>
        <translation>%1 kann nicht ausgeführt werden (%2): %3</translation>
    </message>
    <message>
        <location filename="../gui/core/src/local_agent.cpp" line="180"/>
        <source>ringside-agent print-public-key printed no key: &quot;%1&quot;</source>
        <translation>ringside-agent print-public-key hat keinen Schlüssel ausgegeben: „%1“</translation>
    </message>
    <message>
        <location filename="../gui/core/src/local_agent.cpp" line="220"/>
        <source>the local agent did not start serving within %1 s:
%2</source>
        <translation>der lokale Agent war nicht innerhalb von %1 s bereit:
%2</translation>
    </message>
    <message>
        <location filename="../gui/core/src/local_agent.cpp" line="230"/>
        <source>the local agent exited (code %1) before serving:
%2</source>
        <translation>der lokale Agent wurde beendet (Code %1), bevor er bereit war:
%2</translation>
    </message>
    <message>
        <location filename="../gui/core/src/local_agent.cpp" line="238"/>
        <source>cannot run %1: %2</source>
        <translation>%1 kann nicht ausgeführt werden: %2</translation>
    </message>
    <message>
        <location filename="../gui/core/src/local_agent.cpp" line="270"/>
        <source>the local agent&apos;s ready file names the key %1, not the agent&apos;s key %2</source>
        <translation>die Bereitschaftsdatei des lokalen Agenten nennt den Schlüssel %1, nicht den Schlüssel des Agenten %2</translation>
    </message>
</context>
<context>
    <name>ringside::gui::MainWindow</name>
    <message>
        <location filename="../gui/app/main_window.cpp" line="0"/>
        <source>S&amp;weeps</source>
        <translation>S&amp;weeps</translation>
    </message>
    <message>
        <location filename="../gui/app/main_window.cpp" line="0"/>
        <source>Sweeps</source>
        <translation>Sweeps</translation>
    </message>
    <message>
        <source>Run %1: %2</source>
        <translation>Lauf %1: %2</translation>
    </message>
    <message>
        <location filename="../gui/app/main_window.cpp" line="43"/>
        <source>Ringside</source>
        <translation>Ringside</translation>
    </message>
    <message>
        <location filename="../gui/app/main_window.cpp" line="52"/>
        <source>Nodes</source>
        <translation>Knoten</translation>
    </message>
    <message>
        <location filename="../gui/app/main_window.cpp" line="53"/>
        <source>New run</source>
        <translation>Neuer Lauf</translation>
    </message>
    <message>
        <location filename="../gui/app/main_window.cpp" line="54"/>
        <source>History</source>
        <translation>Verlauf</translation>
    </message>
    <message>
        <location filename="../gui/app/main_window.cpp" line="73"/>
        <source>Launched run %1</source>
        <translation>Lauf %1 gestartet</translation>
    </message>
    <message>
        <location filename="../gui/app/main_window.cpp" line="85"/>
        <source>Launch failed</source>
        <translation>Start fehlgeschlagen</translation>
    </message>
    <message>
        <location filename="../gui/app/main_window.cpp" line="89"/>
        <source>Checking %1 before the launch…</source>
        <translation>Prüfe %1 vor dem Start …</translation>
    </message>
    <message>
        <location filename="../gui/app/main_window.cpp" line="96"/>
        <source>Opening the run database…</source>
        <translation>Laufdatenbank wird geöffnet …</translation>
    </message>
    <message>
        <location filename="../gui/app/main_window.cpp" line="115"/>
        <source>&amp;File</source>
        <translation>&amp;Datei</translation>
    </message>
    <message>
        <location filename="../gui/app/main_window.cpp" line="116"/>
        <source>&amp;Quit</source>
        <translation>&amp;Beenden</translation>
    </message>
    <message>
        <location filename="../gui/app/main_window.cpp" line="118"/>
        <source>&amp;View</source>
        <translation>&amp;Ansicht</translation>
    </message>
    <message>
        <location filename="../gui/app/main_window.cpp" line="119"/>
        <source>&amp;Nodes</source>
        <translation>&amp;Knoten</translation>
    </message>
    <message>
        <location filename="../gui/app/main_window.cpp" line="119"/>
        <source>New &amp;run</source>
        <translation>Neuer &amp;Lauf</translation>
    </message>
    <message>
        <location filename="../gui/app/main_window.cpp" line="119"/>
        <source>&amp;History</source>
        <translation>&amp;Verlauf</translation>
    </message>
    <message>
        <location filename="../gui/app/main_window.cpp" line="125"/>
        <source>&amp;Close tab</source>
        <translation>Tab &amp;schließen</translation>
    </message>
    <message>
        <location filename="../gui/app/main_window.cpp" line="130"/>
        <source>Ne&amp;xt tab</source>
        <translation>&amp;Nächster Tab</translation>
    </message>
    <message>
        <location filename="../gui/app/main_window.cpp" line="134"/>
        <source>&amp;Help</source>
        <translation>&amp;Hilfe</translation>
    </message>
    <message>
        <location filename="../gui/app/main_window.cpp" line="135"/>
        <source>&amp;About Ringside</source>
        <translation>Ü&amp;ber Ringside</translation>
    </message>
    <message>
        <location filename="../gui/app/main_window.cpp" line="137"/>
        <source>About Ringside</source>
        <translation>Über Ringside</translation>
    </message>
    <message>
        <location filename="../gui/app/main_window.cpp" line="138"/>
        <source>&lt;b&gt;Ringside&lt;/b&gt; %1&lt;br&gt;Orchestrate and monitor data-parallel training.&lt;br&gt;Your public key (for agents&apos; allowlists):&lt;br&gt;&lt;tt&gt;%2&lt;/tt&gt;</source>
        <translation>&lt;b&gt;Ringside&lt;/b&gt; %1&lt;br&gt;Datenparalleles Training orchestrieren und überwachen.&lt;br&gt;Ihr öffentlicher Schlüssel (für die Zulassungslisten der Agenten):&lt;br&gt;&lt;tt&gt;%2&lt;/tt&gt;</translation>
    </message>
    <message numerus="yes">
        <location filename="../gui/app/main_window.cpp" line="153"/>
        <source>%Ln node(s) online</source>
        <translation>
            <numerusform>%Ln Knoten online</numerusform>
            <numerusform>%Ln Knoten online</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../gui/app/main_window.cpp" line="168"/>
        <source>Global batch %1 instead of %2: a multiple of the %3 ranks on %4 nodes</source>
        <translation>Globale Batch-Größe %1 statt %2: ein Vielfaches der %3 Ränge auf %4 Knoten</translation>
    </message>
    <message numerus="yes">
        <location filename="../gui/app/main_window.cpp" line="281"/>
        <source>Compare (%Ln)</source>
        <translation>
            <numerusform>Vergleichen (%Ln)</numerusform>
            <numerusform>Vergleichen (%Ln)</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../gui/app/main_window.cpp" line="294"/>
        <source>The cloned run also ran on %1, which no node here has as its host name: check the nodes to run on.</source>
        <translation>Der geklonte Lauf lief auch auf %1, dem Rechnernamen keines Knotens hier: wählen Sie die Knoten für den Lauf.</translation>
    </message>
    <message>
        <location filename="../gui/app/main_window.cpp" line="288"/>
        <source>%1 (copy)</source>
        <translation>%1 (Kopie)</translation>
    </message>
    <message>
        <location filename="../gui/app/main_window.cpp" line="1"/>
        <source>&amp;Queue</source>
        <translation>&amp;Warteschlange</translation>
    </message>
    <message>
        <location filename="../gui/app/main_window.cpp" line="1"/>
        <source>Queue</source>
        <translation>Warteschlange</translation>
    </message>
    <message>
        <location filename="../gui/app/main_window.cpp" line="1"/>
        <source>Queue (%1)</source>
        <translation>Warteschlange (%1)</translation>
    </message>
    <message>
        <location filename="../gui/app/main_window.cpp" line="1"/>
        <source>&amp;Desktop notifications</source>
        <translation>&amp;Desktop-Benachrichtigungen</translation>
    </message>
    <message>
        <location filename="../gui/app/main_window.cpp" line="1"/>
        <source>&amp;Settings</source>
        <translation>&amp;Einstellungen</translation>
    </message>
    <message>
        <location filename="../gui/app/main_window.cpp" line="1"/>
        <source>Tell the desktop when a run launched here starts after waiting in a queue, completes or fails</source>
        <translation>Dem Desktop melden, wenn ein hier gestarteter Lauf nach dem Warten in einer Warteschlange startet, abgeschlossen wird oder fehlschlägt</translation>
    </message>
</context>
<context>
    <name>ringside::gui::MetricChart</name>
    <message>
        <location filename="../gui/widgets/src/metric_chart_view.cpp" line="216"/>
        <source>%1: x = %2, y = %3</source>
        <translation>%1: x = %2, y = %3</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/metric_chart_export.cpp" line="31"/>
        <source>Could not write the PNG file %1: check the folder exists and is writable.</source>
        <translation>Die PNG-Datei %1 konnte nicht geschrieben werden: Prüfen Sie, ob der Ordner existiert und beschreibbar ist.</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/metric_chart_export.cpp" line="50"/>
        <source>Chart exported by Ringside</source>
        <translation>Von Ringside exportiertes Diagramm</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/metric_chart_export.cpp" line="62"/>
        <source>Could not write the SVG file %1: %2</source>
        <translation>Die SVG-Datei %1 konnte nicht geschrieben werden: %2</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/metric_chart_export.cpp" line="75"/>
        <source>Save chart as SVG</source>
        <translation>Diagramm als SVG speichern</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/metric_chart_export.cpp" line="75"/>
        <source>Save chart as PNG</source>
        <translation>Diagramm als PNG speichern</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/metric_chart_export.cpp" line="76"/>
        <source>SVG images (*.svg)</source>
        <translation>SVG-Bilder (*.svg)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/metric_chart_export.cpp" line="76"/>
        <source>PNG images (*.png)</source>
        <translation>PNG-Bilder (*.png)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/metric_chart_export.cpp" line="80"/>
        <source>Export failed</source>
        <translation>Export fehlgeschlagen</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/metric_chart.cpp" line="126"/>
        <source>Save as &amp;PNG…</source>
        <translation>Als &amp;PNG speichern…</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/metric_chart.cpp" line="127"/>
        <source>Save as &amp;SVG…</source>
        <translation>Als &amp;SVG speichern…</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/metric_chart.cpp" line="129"/>
        <source>&amp;Reset zoom</source>
        <translation>Zoom &amp;zurücksetzen</translation>
    </message>
</context>
<context>
    <name>ringside::gui::NodeDetailPane</name>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="108"/>
        <source>Latest GPU readings</source>
        <translation>Letzte GPU-Messwerte</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="232"/>
        <source>%1: %2 (%3 s ago)</source>
        <translation>%1: %2 (vor %3 s)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="460"/>
        <source>PCIe and NVLink: solid receive, dashed transmit. Point at a line for its GPU and value.</source>
        <translation>PCIe und NVLink: durchgezogen Empfang, gestrichelt Senden. Zeigen Sie auf eine Linie für ihre GPU und ihren Wert.</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="89"/>
        <source>Select a node to see its details and live charts.</source>
        <translation>Wählen Sie einen Knoten aus, um seine Details und Live-Diagramme zu sehen.</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="121"/>
        <source>CPU (%)</source>
        <translation>CPU (%)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="121"/>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="124"/>
        <source>%</source>
        <translation>%</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="122"/>
        <source>Memory used (GiB)</source>
        <translation>Belegter Speicher (GiB)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="122"/>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="125"/>
        <source>GiB</source>
        <translation>GiB</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="123"/>
        <source>Network (MB/s)</source>
        <translation>Netzwerk (MB/s)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="123"/>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="129"/>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="130"/>
        <source>MB/s</source>
        <translation>MB/s</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="124"/>
        <source>GPU utilization (%)</source>
        <translation>GPU-Auslastung (%)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="125"/>
        <source>GPU memory used (GiB)</source>
        <translation>Belegter GPU-Speicher (GiB)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="126"/>
        <source>GPU power (W)</source>
        <translation>GPU-Leistung (W)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="126"/>
        <source>W</source>
        <translation>W</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="127"/>
        <source>GPU temperature (°C)</source>
        <translation>GPU-Temperatur (°C)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="127"/>
        <source>°C</source>
        <translation>°C</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="128"/>
        <source>GPU SM clock (MHz)</source>
        <translation>GPU-SM-Takt (MHz)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="128"/>
        <source>MHz</source>
        <translation>MHz</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="129"/>
        <source>GPU PCIe (MB/s)</source>
        <translation>GPU-PCIe (MB/s)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="130"/>
        <source>GPU NVLink (MB/s)</source>
        <translation>GPU-NVLink (MB/s)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="131"/>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="463"/>
        <source>CPU</source>
        <translation>CPU</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="132"/>
        <source>used</source>
        <translation>belegt</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="133"/>
        <source>receive</source>
        <translation>Empfang</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="133"/>
        <source>transmit</source>
        <translation>Senden</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="194"/>
        <source>seconds ago</source>
        <translation>vor Sekunden</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="335"/>
        <source>GPU %1</source>
        <translation>GPU %1</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="336"/>
        <source>GPU %1 rx</source>
        <translation>GPU %1 empfangen</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="337"/>
        <source>GPU %1 tx</source>
        <translation>GPU %1 gesendet</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="421"/>
        <source>utilization %1 %</source>
        <translation>Auslastung %1 %</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="422"/>
        <source>memory %1 / %2 GiB</source>
        <translation>Speicher %1 / %2 GiB</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="425"/>
        <source>power %1 W</source>
        <translation>Leistung %1 W</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="426"/>
        <source>temperature %1 °C</source>
        <translation>Temperatur %1 °C</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="427"/>
        <source>SM clock %1 MHz</source>
        <translation>SM-Takt %1 MHz</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="428"/>
        <source>PCIe rx %1, tx %2 MB/s</source>
        <translation>PCIe empfangen %1, gesendet %2 MB/s</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="431"/>
        <source>NVLink rx %1, tx %2 MB/s</source>
        <translation>NVLink empfangen %1, gesendet %2 MB/s</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="441"/>
        <source>Node %1 is no longer listed.</source>
        <translation>Knoten %1 ist nicht mehr aufgeführt.</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="445"/>
        <source>%1 — %2</source>
        <translation>%1 — %2</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="447"/>
        <source>No inventory yet: the node has not answered.</source>
        <translation>Noch keine Bestandsdaten: Der Knoten hat nicht geantwortet.</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="460"/>
        <source>Host name</source>
        <translation>Hostname</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="461"/>
        <source>Address</source>
        <translation>Adresse</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="462"/>
        <source>OS</source>
        <translation>Betriebssystem</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="464"/>
        <source>Cores</source>
        <translation>Kerne</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="465"/>
        <source>Memory</source>
        <translation>Speicher</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="466"/>
        <source>%1 GiB</source>
        <translation>%1 GiB</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="470"/>
        <source>%1: %2, %3 GiB, driver %4, CUDA %5</source>
        <translation>%1: %2, %3 GiB, Treiber %4, CUDA %5</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="475"/>
        <source>GPUs</source>
        <translation>GPUs</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="475"/>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="485"/>
        <source>none</source>
        <translation>keine</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="479"/>
        <source>GPU %1 now</source>
        <translation>GPU %1 jetzt</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="482"/>
        <source>Slots</source>
        <translation>Slots</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="485"/>
        <source>Labels</source>
        <translation>Labels</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="486"/>
        <source>Agent</source>
        <translation>Agent</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="487"/>
        <source>Node id</source>
        <translation>Knoten-ID</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="1"/>
        <source>Engine</source>
        <translation>Engine</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="1"/>
        <source>Slurm (runs are Slurm jobs)</source>
        <translation>Slurm (Läufe sind Slurm-Jobs)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="1"/>
        <source>%L1 %2</source>
        <translation>%L1 %2</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="1"/>
        <source>&lt;b&gt;%1&lt;/b&gt;%2: %3, %L4 nodes (%5), %L6 GPUs, time limit %7</source>
        <translation>&lt;b&gt;%1&lt;/b&gt;%2: %3, %L4 Knoten (%5), %L6 GPUs, Zeitlimit %7</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="1"/>
        <source> (default)</source>
        <translation> (Standard)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="1"/>
        <source>Partitions</source>
        <translation>Partitionen</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="1"/>
        <source>not known yet (sinfo)</source>
        <translation>noch nicht bekannt (sinfo)</translation>
    </message>
</context>
<context>
    <name>ringside::gui::NodeTableModel</name>
    <message>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="416"/>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="452"/>
        <location filename="../gui/widgets/src/node_detail_pane.cpp" line="467"/>
        <location filename="../gui/widgets/src/node_table_model.cpp" line="45"/>
        <location filename="../gui/widgets/src/node_table_model.cpp" line="350"/>
        <source>N/A</source>
        <translation>k. A.</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_table_model.cpp" line="34"/>
        <location filename="../gui/widgets/src/node_table_model.cpp" line="35"/>
        <source>%1 s</source>
        <translation>%1 s</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_table_model.cpp" line="37"/>
        <source>%1 min</source>
        <translation>%1 min</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_table_model.cpp" line="39"/>
        <source>%1 h</source>
        <translation>%1 h</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_table_model.cpp" line="140"/>
        <source>Stalled runs (docs/metrics.md, Hangs):
%1</source>
        <translation>Hängende Läufe (docs/metrics.md, Hangs):
%1</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_table_model.cpp" line="143"/>
        <source>The local agent, started by this GUI on loopback</source>
        <translation>Der lokale Agent, von dieser GUI auf Loopback gestartet</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_table_model.cpp" line="151"/>
        <source>GPU %1: %2, %3 GiB</source>
        <translation>GPU %1: %2, %3 GiB</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_table_model.cpp" line="158"/>
        <source>%1, in use by a run</source>
        <translation>%1, von einem Lauf belegt</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_table_model.cpp" line="160"/>
        <source>%1, free</source>
        <translation>%1, frei</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_table_model.cpp" line="199"/>
        <source>Name</source>
        <translation>Name</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_table_model.cpp" line="201"/>
        <source>Address</source>
        <translation>Adresse</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_table_model.cpp" line="203"/>
        <source>State</source>
        <translation>Status</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_table_model.cpp" line="205"/>
        <source>CPU</source>
        <translation>CPU</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_table_model.cpp" line="207"/>
        <source>Memory</source>
        <translation>Speicher</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_table_model.cpp" line="209"/>
        <source>GPUs</source>
        <translation>GPUs</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_table_model.cpp" line="211"/>
        <source>Slots</source>
        <translation>Slots</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_table_model.cpp" line="213"/>
        <source>Agent</source>
        <translation>Agent</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_table_model.cpp" line="236"/>
        <source>connecting…</source>
        <translation>verbindet…</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_table_model.cpp" line="238"/>
        <source>draining</source>
        <translation>gesperrt</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_table_model.cpp" line="238"/>
        <source>online</source>
        <translation>online</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_table_model.cpp" line="241"/>
        <source>offline</source>
        <translation>offline</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_table_model.cpp" line="244"/>
        <source>%1 (%2)</source>
        <translation>%1 (%2)</translation>
    </message>
    <message numerus="yes">
        <location filename="../gui/widgets/src/node_table_model.cpp" line="246"/>
        <source>%1, %n stalled run(s)</source>
        <translation>
            <numerusform>%1, %n hängender Lauf</numerusform>
            <numerusform>%1, %n hängende Läufe</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_table_model.cpp" line="256"/>
        <source>%1, data refused</source>
        <translation>%1, Daten abgelehnt</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_table_model.cpp" line="145"/>
        <source>Data over the protocol&apos;s limits, clipped or refused:
%1</source>
        <translation>Daten über den Grenzen des Protokolls, gekürzt oder abgelehnt:
%1</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_table_model.cpp" line="255"/>
        <source>1 core</source>
        <translation>1 Kern</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_table_model.cpp" line="255"/>
        <source>%1 cores</source>
        <translation>%1 Kerne</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_table_model.cpp" line="257"/>
        <location filename="../gui/widgets/src/node_table_model.cpp" line="280"/>
        <source>%1 %</source>
        <translation>%1 %</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_table_model.cpp" line="266"/>
        <source>%1 / %2 GiB</source>
        <translation>%1 / %2 GiB</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_table_model.cpp" line="273"/>
        <source>none</source>
        <translation>keine</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_table_model.cpp" line="290"/>
        <source>%1; %2 of %3 in use</source>
        <translation>%1; %2 von %3 belegt</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_table_model.cpp" line="298"/>
        <source>%1 free / %2 used cpu</source>
        <translation>%1 frei / %2 belegt CPU</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/node_table_model.cpp" line="303"/>
        <source>%1 free / %2 used gpu; %3</source>
        <translation>%1 frei / %2 belegt GPU; %3</translation>
    </message>
    <message>
        <source>%1 nodes, %2 online · GPUs in use: %3 of %4 · mean GPU utilization %5</source>
        <translation>%1 Knoten, %2 online · GPUs belegt: %3 von %4 · mittlere GPU-Auslastung %5</translation>
    </message>
</context>
<context>
    <name>ringside::gui::NodesPanel</name>
    <message>
        <location filename="../gui/widgets/src/nodes_panel.cpp" line="40"/>
        <source>&amp;Add node…</source>
        <translation>Knoten &amp;hinzufügen…</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/nodes_panel.cpp" line="41"/>
        <source>Add a node by its address and the agent&apos;s public key</source>
        <translation>Einen Knoten über seine Adresse und den öffentlichen Schlüssel des Agenten hinzufügen</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/nodes_panel.cpp" line="42"/>
        <source>&amp;Edit…</source>
        <translation>&amp;Bearbeiten…</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/nodes_panel.cpp" line="43"/>
        <source>Change the selected node&apos;s name, address or key</source>
        <translation>Name, Adresse oder Schlüssel des ausgewählten Knotens ändern</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/nodes_panel.cpp" line="44"/>
        <source>&amp;Remove</source>
        <translation>&amp;Entfernen</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/nodes_panel.cpp" line="45"/>
        <source>Remove the selected node from this GUI</source>
        <translation>Den ausgewählten Knoten aus dieser GUI entfernen</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/nodes_panel.cpp" line="46"/>
        <source>&amp;Drain</source>
        <translation>&amp;Sperren</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/nodes_panel.cpp" line="47"/>
        <source>The selected node accepts no new runs; running ones go on</source>
        <translation>Der ausgewählte Knoten nimmt keine neuen Läufe an; laufende werden fortgesetzt</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/nodes_panel.cpp" line="48"/>
        <source>&amp;Undrain</source>
        <translation>&amp;Freigeben</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/nodes_panel.cpp" line="49"/>
        <source>The selected node accepts new runs again</source>
        <translation>Der ausgewählte Knoten nimmt wieder neue Läufe an</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/nodes_panel.cpp" line="194"/>
        <source>Remove node</source>
        <translation>Knoten entfernen</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/nodes_panel.cpp" line="195"/>
        <source>Remove node &quot;%1&quot; from this GUI?</source>
        <translation>Knoten „%1“ aus dieser GUI entfernen?</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/nodes_panel.cpp" line="198"/>
        <source>The local agent is stopped; runs on it go on, and their history stays in this GUI.</source>
        <translation>Der lokale Agent wird gestoppt; Läufe darauf werden fortgesetzt, und ihr Verlauf bleibt in dieser GUI erhalten.</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/nodes_panel.cpp" line="200"/>
        <source>The agent and its runs are not touched; the run history stays in this GUI.</source>
        <translation>Der Agent und seine Läufe bleiben unberührt; der Laufverlauf bleibt in dieser GUI erhalten.</translation>
    </message>
    <message>
        <source>Filter nodes</source>
        <translation>Knoten filtern</translation>
    </message>
    <message>
        <source>Shows the nodes with this text in any column (name, address, state, CPU model, GPUs, agent version).</source>
        <translation>Zeigt die Knoten mit diesem Text in einer beliebigen Spalte (Name, Adresse, Zustand, CPU-Modell, GPUs, Agent-Version).</translation>
    </message>
</context>
<context>
    <name>ringside::gui::RankHeatmapView</name>
    <message>
        <location filename="../gui/widgets/src/rank_heatmap_view.cpp" line="28"/>
        <location filename="../gui/widgets/src/rank_heatmap_view.cpp" line="225"/>
        <location filename="../gui/widgets/src/rank_heatmap_view.cpp" line="263"/>
        <source>N/A</source>
        <translation>k. A.</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/rank_heatmap_view.cpp" line="39"/>
        <source>unknown node</source>
        <translation>unbekannter Knoten</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/rank_heatmap_view.cpp" line="68"/>
        <location filename="../gui/widgets/src/rank_heatmap_view.cpp" line="71"/>
        <location filename="../gui/widgets/src/rank_heatmap_view.cpp" line="158"/>
        <source>rank %1</source>
        <translation>Rang %1</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/rank_heatmap_view.cpp" line="121"/>
        <source>No per-rank timings yet: the heatmap fills as the ranks report compute and all-reduce times.</source>
        <translation>Noch keine Zeiten pro Rang: Die Heatmap füllt sich, sobald die Ränge Rechen- und All-Reduce-Zeiten melden.</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/rank_heatmap_view.cpp" line="205"/>
        <source>step (windows of %L1 steps)</source>
        <translation>Schritt (Fenster von %L1 Schritten)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/rank_heatmap_view.cpp" line="255"/>
        <source>median</source>
        <translation>Median</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/rank_heatmap_view.cpp" line="277"/>
        <source>Compute time</source>
        <translation>Rechenzeit</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/rank_heatmap_view.cpp" line="278"/>
        <source>All-reduce wait</source>
        <translation>All-Reduce-Wartezeit</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/rank_heatmap_view.cpp" line="280"/>
        <source>Compute time: forward and backward of each rank; a slow rank (a straggler) is red. All-reduce wait: time blocked on communication after backward; a straggler waits least (blue), the ranks that wait for it most.</source>
        <translation>Rechenzeit: Vorwärts- und Rückwärtsdurchlauf jedes Rangs; ein langsamer Rang (ein Nachzügler) ist rot. All-Reduce-Wartezeit: Zeit, die nach dem Rückwärtsdurchlauf auf die Kommunikation gewartet wird; ein Nachzügler wartet am wenigsten (blau), die Ränge, die auf ihn warten, am meisten.</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/rank_heatmap_view.cpp" line="286"/>
        <source>Colour:</source>
        <translation>Farbe:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/rank_heatmap_view.cpp" line="298"/>
        <source>Each cell: the rank&apos;s mean compute time in a window of steps against the median over ranks in that window.</source>
        <translation>Jede Zelle: die mittlere Rechenzeit des Rangs in einem Schrittfenster gegenüber dem Median aller Ränge in diesem Fenster.</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/rank_heatmap_view.cpp" line="300"/>
        <source>Each cell: the rank&apos;s all-reduce wait minus the window&apos;s median wait, as a share of the median compute time.</source>
        <translation>Jede Zelle: die All-Reduce-Wartezeit des Rangs abzüglich der mittleren Wartezeit (Median) des Fensters, als Anteil der mittleren Rechenzeit (Median).</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/rank_heatmap_view.cpp" line="339"/>
        <source>Rank %1 on %2</source>
        <translation>Rang %1 auf %2</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/rank_heatmap_view.cpp" line="340"/>
        <source>Steps %L1 to %L2</source>
        <translation>Schritte %L1 bis %L2</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/rank_heatmap_view.cpp" line="343"/>
        <source>Compute: %1 ms, median %2 ms</source>
        <translation>Rechnen: %1 ms, Median %2 ms</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/rank_heatmap_view.cpp" line="348"/>
        <source>All-reduce wait: %1 ms, median %2 ms</source>
        <translation>All-Reduce-Wartezeit: %1 ms, Median %2 ms</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/rank_heatmap_view.cpp" line="351"/>
        <source>(%1 of the median compute time)</source>
        <translation>(%1 der mittleren Rechenzeit)</translation>
    </message>
    <message>
        <source>All-reduce wait: N/A</source>
        <translation>All-Reduce-Wartezeit: k. A.</translation>
    </message>
    <message>
        <source>All-reduce wait: rank %1 furthest from the median (%2 of the median compute time)</source>
        <translation>All-Reduce-Wartezeit: Rang %1 am weitesten vom Median entfernt (%2 der medianen Rechenzeit)</translation>
    </message>
    <message>
        <source>Compute: N/A</source>
        <translation>Rechenzeit: k. A.</translation>
    </message>
    <message>
        <source>Compute: rank %1 furthest from the median (%2)</source>
        <translation>Rechenzeit: Rang %1 am weitesten vom Median entfernt (%2)</translation>
    </message>
    <message>
        <source>Node %1: %2 ranks (click to collapse)</source>
        <translation>Knoten %1: %2 Ränge (Klick zum Zuklappen)</translation>
    </message>
    <message>
        <source>Node %1: %2 ranks (click to show them)</source>
        <translation>Knoten %1: %2 Ränge (Klick zum Anzeigen)</translation>
    </message>
    <message>
        <source>One row per node, coloured by its rank furthest from the median; click a node's row to show its ranks.</source>
        <translation>Eine Zeile je Knoten, gefärbt nach seinem Rang mit der größten Abweichung vom Median; ein Klick auf die Zeile eines Knotens zeigt seine Ränge.</translation>
    </message>
</context>
<context>
    <name>ringside::gui::RankView</name>
    <message>
        <location filename="../gui/widgets/src/rank_view.cpp" line="23"/>
        <location filename="../gui/widgets/src/rank_view.cpp" line="126"/>
        <source>N/A</source>
        <translation>k. A.</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/rank_view.cpp" line="48"/>
        <location filename="../gui/widgets/src/rank_view.cpp" line="163"/>
        <source>No per-rank timings yet (a run with more than one rank reports them).</source>
        <translation>Noch keine Zeiten pro Rang (ein Lauf mit mehr als einem Rang meldet sie).</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/rank_view.cpp" line="52"/>
        <source>Rank</source>
        <translation>Rang</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/rank_view.cpp" line="52"/>
        <source>Node</source>
        <translation>Knoten</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/rank_view.cpp" line="52"/>
        <source>Step (ms)</source>
        <translation>Schritt (ms)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/rank_view.cpp" line="52"/>
        <source>All-reduce wait (ms)</source>
        <translation>All-Reduce-Wartezeit (ms)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/rank_view.cpp" line="52"/>
        <source>Step vs median</source>
        <translation>Schritt ggü. Median</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/rank_view.cpp" line="123"/>
        <location filename="../gui/widgets/src/rank_view.cpp" line="170"/>
        <source>unknown</source>
        <translation>unbekannt</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/rank_view.cpp" line="168"/>
        <source>slowest: rank %1 on node %2, step %3 ms (%4% over median)</source>
        <translation>Am langsamsten: Rang %1 auf Knoten %2, Schritt %3 ms (%4 % über dem Median)</translation>
    </message>
    <message>
        <source>%1 slowest</source>
        <translation>die %1 langsamsten</translation>
    </message>
    <message>
        <source>All ranks</source>
        <translation>Alle Ränge</translation>
    </message>
    <message>
        <source>Filter: rank or node</source>
        <translation>Filter: Rang oder Knoten</translation>
    </message>
    <message>
        <source>Group by node</source>
        <translation>Nach Knoten gruppieren</translation>
    </message>
    <message>
        <source>One row per node (its slowest rank's step time and its longest wait) that expands to its ranks.</source>
        <translation>Eine Zeile je Knoten (Schrittzeit seines langsamsten Rangs und seine längste Wartezeit), die sich zu seinen Rängen aufklappen lässt.</translation>
    </message>
    <message>
        <source>Only the ranks with the longest latest step time.</source>
        <translation>Nur die Ränge mit der längsten letzten Schrittzeit.</translation>
    </message>
    <message>
        <source>Show:</source>
        <translation>Zeigen:</translation>
    </message>
    <message>
        <source>Shows the rank with this number and the ranks on nodes whose name contains the text.</source>
        <translation>Zeigt den Rang mit dieser Nummer und die Ränge auf Knoten, deren Name den Text enthält.</translation>
    </message>
</context>
<context>
    <name>ringside::gui::RunGpuPanel</name>
    <message>
        <location filename="../gui/widgets/src/run_gpu_panel.cpp" line="51"/>
        <source>GPU utilization</source>
        <translation>GPU-Auslastung</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_gpu_panel.cpp" line="51"/>
        <source>utilization (%)</source>
        <translation>Auslastung (%)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_gpu_panel.cpp" line="52"/>
        <source>GPU memory</source>
        <translation>GPU-Speicher</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_gpu_panel.cpp" line="52"/>
        <location filename="../gui/widgets/src/run_gpu_panel.cpp" line="280"/>
        <source>memory used (MiB)</source>
        <translation>Belegter Speicher (MiB)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_gpu_panel.cpp" line="53"/>
        <source>GPU power</source>
        <translation>GPU-Leistung</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_gpu_panel.cpp" line="53"/>
        <source>power (W)</source>
        <translation>Leistung (W)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_gpu_panel.cpp" line="54"/>
        <source>GPU temperature</source>
        <translation>GPU-Temperatur</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_gpu_panel.cpp" line="54"/>
        <source>temperature (°C)</source>
        <translation>Temperatur (°C)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_gpu_panel.cpp" line="55"/>
        <source>GPU SM clock</source>
        <translation>GPU-SM-Takt</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_gpu_panel.cpp" line="55"/>
        <source>SM clock (MHz)</source>
        <translation>SM-Takt (MHz)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_gpu_panel.cpp" line="56"/>
        <source>GPU PCIe throughput</source>
        <translation>GPU-PCIe-Durchsatz</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_gpu_panel.cpp" line="56"/>
        <source>PCIe rx, tx (MB/s)</source>
        <translation>PCIe rx, tx (MB/s)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_gpu_panel.cpp" line="58"/>
        <source>GPU NVLink throughput (all links)</source>
        <translation>GPU-NVLink-Durchsatz (alle Links)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_gpu_panel.cpp" line="58"/>
        <source>NVLink rx, tx (MB/s)</source>
        <translation>NVLink rx, tx (MB/s)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_gpu_panel.cpp" line="65"/>
        <location filename="../gui/widgets/src/run_gpu_panel.cpp" line="273"/>
        <source>time since start (s)</source>
        <translation>Zeit seit Start (s)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_gpu_panel.cpp" line="207"/>
        <source>%1 rx</source>
        <translation>%1 rx</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_gpu_panel.cpp" line="208"/>
        <source>%1 tx</source>
        <translation>%1 tx</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_gpu_panel.cpp" line="249"/>
        <source>The run uses no GPUs</source>
        <translation>Der Lauf verwendet keine GPUs</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_gpu_panel.cpp" line="251"/>
        <source>N/A: no GPU of the run reports this value</source>
        <translation>k. A.: keine GPU des Laufs meldet diesen Wert</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_gpu_panel.cpp" line="253"/>
        <source>No GPUs on this node</source>
        <translation>Keine GPUs auf diesem Knoten</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_gpu_panel.cpp" line="255"/>
        <source>No GPU telemetry was stored with this run</source>
        <translation>Mit diesem Lauf wurde keine GPU-Telemetrie gespeichert</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_gpu_panel.cpp" line="257"/>
        <source>No telemetry from the run&apos;s node yet</source>
        <translation>Noch keine Telemetrie vom Knoten des Laufs</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_gpu_panel.cpp" line="275"/>
        <source>time since start (s); memory size %1 MiB</source>
        <translation>Zeit seit Start (s); Speichergröße %1 MiB</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_gpu_panel.cpp" line="277"/>
        <source>time since start (s); memory size %1–%2 MiB</source>
        <translation>Zeit seit Start (s); Speichergröße %1–%2 MiB</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_gpu_panel.cpp" line="285"/>
        <source>%1 GPU %2</source>
        <translation>%1 GPU %2</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_gpu_panel.cpp" line="286"/>
        <source>GPU %1</source>
        <translation>GPU %1</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_gpu_panel.cpp" line="312"/>
        <source>rank %1&apos;s node</source>
        <translation>Knoten von Rank %1</translation>
    </message>
</context>
<context>
    <name>ringside::gui::RunSetupPanel</name>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="62"/>
        <source>Run</source>
        <translation>Lauf</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="65"/>
        <source>e.g. fmnist baseline</source>
        <translation>z. B. fmnist baseline</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="66"/>
        <source>&amp;Name:</source>
        <translation>&amp;Name:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="69"/>
        <source>comma-separated, e.g. sweep, mlp</source>
        <translation>kommagetrennt, z. B. sweep, mlp</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="70"/>
        <source>&amp;Tags:</source>
        <translation>&amp;Tags:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="71"/>
        <source>Ringside trainer</source>
        <translation>Ringside-Trainer</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="72"/>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="229"/>
        <source>Custom command</source>
        <translation>Eigener Befehl</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="73"/>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="241"/>
        <source>PyTorch script</source>
        <translation>PyTorch-Skript</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="75"/>
        <source>Your own PyTorch DDP script, with three calls of the ringside package (init_process_group, watch, log): its loss and per-bucket all-reduce timings live (docs/pytorch.md)</source>
        <translation>Ihr eigenes PyTorch-DDP-Skript mit drei Aufrufen des Pakets ringside (init_process_group, watch, log): sein Verlust und die All-Reduce-Zeiten je Bucket live (docs/pytorch.md)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="84"/>
        <source>Job:</source>
        <translation>Job:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="92"/>
        <source>Data and model</source>
        <translation>Daten und Modell</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="95"/>
        <source>Browse…</source>
        <translation>Durchsuchen…</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="99"/>
        <source>Dataset directory:</source>
        <translation>Datensatzverzeichnis:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="102"/>
        <source>CNN: 2 conv layers (oneDNN / cuDNN)</source>
        <translation>CNN: 2 Faltungsschichten (oneDNN / cuDNN)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="103"/>
        <source>MLP: fully connected</source>
        <translation>MLP: vollständig verbunden</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="107"/>
        <source>&amp;Model:</source>
        <translation>&amp;Modell:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="110"/>
        <source>Hidden layer widths; input and output sizes come from the dataset</source>
        <translation>Breiten der verborgenen Schichten; Ein- und Ausgabegrößen ergeben sich aus dem Datensatz</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="111"/>
        <source>&amp;Hidden layers:</source>
        <translation>&amp;Verborgene Schichten:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="115"/>
        <source>Output channels of each 3x3 conv stage (each followed by ReLU and 2x2 max-pooling), input to output</source>
        <translation>Ausgabekanäle jeder 3x3-Faltungsstufe (jeweils gefolgt von ReLU und 2x2-Max-Pooling), vom Eingang zum Ausgang</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="117"/>
        <source>Conv &amp;channels:</source>
        <translation>Faltungs&amp;kanäle:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="123"/>
        <source>Probability that dropout zeroes a conv feature during training</source>
        <translation>Wahrscheinlichkeit, mit der Dropout im Training ein Faltungsmerkmal auf null setzt</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="124"/>
        <source>&amp;Dropout:</source>
        <translation>&amp;Dropout:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="127"/>
        <source>Auto (Winograd where it is faster)</source>
        <translation>Automatisch (Winograd, wo es schneller ist)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="128"/>
        <source>Direct</source>
        <translation>Direkt</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="130"/>
        <source>How the conv layers are computed. Auto uses oneDNN&apos;s Winograd kernel for the conv layers whose input and output channel counts are multiples of 16, on CPUs with AVX-512 (about 1.5x faster for the default CNN&apos;s second layer), and direct convolution elsewhere. Direct computes every layer directly, as PyTorch does on a CPU, and rounds like it. Run spec key conv_algorithm (ringside-trainer --conv-algorithm).</source>
        <translation>Wie die Faltungsschichten berechnet werden. Automatisch verwendet den Winograd-Kernel von oneDNN für die Faltungsschichten, deren Ein- und Ausgabekanalzahlen Vielfache von 16 sind, auf CPUs mit AVX-512 (etwa 1,5-mal schneller für die zweite Schicht des Standard-CNN), und sonst direkte Faltung. Direkt berechnet jede Schicht direkt, wie PyTorch auf einer CPU, und rundet wie PyTorch. Schlüssel conv_algorithm der Laufspezifikation (ringside-trainer --conv-algorithm).</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="136"/>
        <source>Convol&amp;ution:</source>
        <translation>&amp;Faltung:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="140"/>
        <source>Optimizer</source>
        <translation>Optimierer</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="143"/>
        <source>SGD</source>
        <translation>SGD</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="144"/>
        <source>AdamW</source>
        <translation>AdamW</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="145"/>
        <source>&amp;Optimizer:</source>
        <translation>&amp;Optimierer:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="147"/>
        <source>&amp;Learning rate:</source>
        <translation>&amp;Lernrate:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="150"/>
        <source>&amp;Momentum:</source>
        <translation>&amp;Momentum:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="152"/>
        <source>Nesterov</source>
        <translation>Nesterov</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="156"/>
        <source>Beta &amp;1:</source>
        <translation>Beta &amp;1:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="157"/>
        <source>Beta &amp;2:</source>
        <translation>Beta &amp;2:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="160"/>
        <source>&amp;Weight decay:</source>
        <translation>&amp;Weight Decay:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="162"/>
        <source>Cosine</source>
        <translation>Kosinus</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="163"/>
        <source>Step</source>
        <translation>Stufen</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="164"/>
        <source>Constant</source>
        <translation>Konstant</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="165"/>
        <source>LR &amp;schedule:</source>
        <translation>LR-&amp;Zeitplan:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="167"/>
        <source>&amp;Warm-up steps:</source>
        <translation>Warm-&amp;up-Schritte:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="171"/>
        <source>Decay every (epochs):</source>
        <translation>Abklingen alle (Epochen):</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="173"/>
        <source>Decay factor:</source>
        <translation>Abklingfaktor:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="174"/>
        <source>Final learning rate:</source>
        <translation>End-Lernrate:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="178"/>
        <source>Training</source>
        <translation>Training</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="181"/>
        <source>&amp;Epochs:</source>
        <translation>&amp;Epochen:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="183"/>
        <source>&amp;Global batch:</source>
        <translation>&amp;Globaler Batch:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="186"/>
        <source>whole local batch</source>
        <translation>ganzer lokaler Batch</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="188"/>
        <source>Gradient accumulation: each rank computes its local batch in passes of this many samples and sums their gradients before the all-reduce. Less memory for activations; the same step.</source>
        <translation>Gradientenakkumulation: Jeder Rank berechnet seinen lokalen Batch in Durchgängen mit so vielen Beispielen und summiert deren Gradienten vor dem All-Reduce. Weniger Speicher für Aktivierungen; derselbe Schritt.</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="191"/>
        <source>&amp;Micro-batch:</source>
        <translation>&amp;Mikro-Batch:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="194"/>
        <source>Auto (GPU when present)</source>
        <translation>Automatisch (GPU, falls vorhanden)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="195"/>
        <source>NCCL (GPU)</source>
        <translation>NCCL (GPU)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="196"/>
        <source>MPI (CPU)</source>
        <translation>MPI (CPU)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="197"/>
        <source>&amp;Backend:</source>
        <translation>&amp;Backend:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="199"/>
        <source>Gradient &amp;bucket (MiB):</source>
        <translation>Gradienten-Bu&amp;cket (MiB):</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="201"/>
        <source>at the end and on stop</source>
        <translation>am Ende und beim Stoppen</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="202"/>
        <source>&amp;Checkpoint every (steps):</source>
        <translation>&amp;Prüfpunkt alle (Schritte):</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="206"/>
        <source>How often every rank reports its metrics (loss, and its step, compute and all-reduce times, each the mean over the steps since its last report), in global steps; the last step of each epoch always reports. 1 = every step: the charts and the per-rank heatmap show every step, at the cost of more values to send and store. Run spec key log_every (ringside-trainer --log-every).</source>
        <translation>Wie oft jeder Rang seine Metriken meldet (Loss sowie Schritt-, Rechen- und All-Reduce-Zeiten, jeweils der Mittelwert über die Schritte seit der letzten Meldung), in globalen Schritten; der letzte Schritt jeder Epoche meldet immer. 1 = jeder Schritt: Diagramme und die Heatmap pro Rang zeigen jeden Schritt, auf Kosten von mehr Werten, die gesendet und gespeichert werden. Schlüssel log_every der Laufspezifikation (ringside-trainer --log-every).</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="211"/>
        <source>Metric &amp;interval (steps):</source>
        <translation>Metrik-&amp;Intervall (Schritte):</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="216"/>
        <source>S&amp;eed:</source>
        <translation>See&amp;d:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="218"/>
        <source>start afresh</source>
        <translation>neu beginnen</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="220"/>
        <source>Continue from a checkpoint: a checkpoint file (ckpt-*.rsck), or a directory whose newest checkpoint is used, on the node that owns the run. The model, optimizer, global batch, seed and data must match the checkpoint&apos;s. Run spec key resume (ringside-trainer --resume).</source>
        <translation>Von einem Prüfpunkt fortsetzen: eine Prüfpunktdatei (ckpt-*.rsck) oder ein Verzeichnis, dessen neuester Prüfpunkt verwendet wird, auf dem Knoten, dem der Lauf gehört. Modell, Optimierer, globaler Batch, Seed und Daten müssen zu denen des Prüfpunkts passen. Run-Spec-Schlüssel resume (ringside-trainer --resume).</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="224"/>
        <source>Resume &amp;from checkpoint:</source>
        <translation>Fortsetzen ab Pr&amp;üfpunkt:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="232"/>
        <source>python3 train.py --epochs 3</source>
        <translation>python3 train.py --epochs 3</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="234"/>
        <source>Started under mpirun on every rank; report metrics by printing JSON Lines records on stdout (see docs/metrics.md)</source>
        <translation>Läuft unter mpirun auf jedem Rang; Metriken als JSON-Lines-Datensätze auf stdout ausgeben (siehe docs/metrics.md)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="236"/>
        <source>Co&amp;mmand:</source>
        <translation>Be&amp;fehl:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="244"/>
        <source>/srv/train/ddp_fashion_mnist.py</source>
        <translation>/srv/train/ddp_fashion_mnist.py</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="246"/>
        <source>The script&apos;s path on every node of the run (the agent&apos;s user must be able to read it). It joins the process group with ringside.torch.init_process_group(), times its all-reduces with ringside.torch.watch(model) and logs with ringside.log().</source>
        <translation>Der Pfad des Skripts auf jedem Knoten des Laufs (der Benutzer des Agenten muss es lesen können). Es tritt der Prozessgruppe mit ringside.torch.init_process_group() bei, misst seine All-Reduces mit ringside.torch.watch(model) und zeichnet mit ringside.log() auf.</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="249"/>
        <source>&amp;Script:</source>
        <translation>&amp;Skript:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="252"/>
        <source>--epochs 3 --batch 256</source>
        <translation>--epochs 3 --batch 256</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="253"/>
        <source>&amp;Arguments:</source>
        <translation>&amp;Argumente:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="256"/>
        <source>The Python that runs the script on every node: one that has torch (Debian&apos;s /usr/bin/python3 with python3-torch, or a virtual environment&apos;s bin/python)</source>
        <translation>Das Python, das das Skript auf jedem Knoten ausführt: eines mit torch (Debians /usr/bin/python3 mit python3-torch oder bin/python einer virtuellen Umgebung)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="258"/>
        <source>&amp;Interpreter:</source>
        <translation>&amp;Interpreter:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="261"/>
        <source>the run&apos;s own directory</source>
        <translation>das eigene Verzeichnis des Laufs</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="262"/>
        <source>&amp;Working directory:</source>
        <translation>Arbeits&amp;verzeichnis:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="263"/>
        <source>Use GPUs (one per rank, NCCL)</source>
        <translation>GPUs verwenden (eine je Rang, NCCL)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="265"/>
        <source>Checked: every rank takes one of the node&apos;s free GPUs (CUDA_VISIBLE_DEVICES) and the process group uses NCCL. Unchecked: every rank takes a CPU core and uses gloo.</source>
        <translation>Eingeschaltet: Jeder Rang belegt eine der freien GPUs des Knotens (CUDA_VISIBLE_DEVICES), und die Prozessgruppe verwendet NCCL. Ausgeschaltet: Jeder Rang belegt einen CPU-Kern und verwendet gloo.</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="271"/>
        <source>Placement</source>
        <translation>Platzierung</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="280"/>
        <source>Check the nodes to run on. Ranks are placed in list order and the first checked node owns the run; drag a node to change the order.</source>
        <translation>Markieren Sie die Knoten für den Lauf. Die Ränge werden in Listenreihenfolge verteilt, und der erste markierte Knoten führt den Lauf; ziehen Sie einen Knoten, um die Reihenfolge zu ändern.</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="282"/>
        <source>N&amp;odes:</source>
        <translation>&amp;Knoten:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="291"/>
        <source>never</source>
        <translation>nie</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="292"/>
        <source> s</source>
        <translation> s</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="294"/>
        <source>The agent fails the run when no rank has made progress for this long (a hung rank: stopped, frozen, or deadlocked), after flagging it stalled within seconds on the dashboard. Default 600 s (10 minutes); for the trainer it must stay below its collective timeout (900 s by default). Run spec key hang_timeout_s.</source>
        <translation>Der Agent lässt den Lauf fehlschlagen, wenn so lange kein Rang Fortschritt gemacht hat (ein hängender Rang: angehalten, eingefroren oder verklemmt), nachdem er ihn binnen Sekunden im Dashboard als stockend markiert hat. Standard 600 s (10 Minuten); für den Trainer muss es unter seinem Collective-Zeitlimit bleiben (standardmäßig 900 s). Run-Spec-Schlüssel hang_timeout_s.</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="298"/>
        <source>Han&amp;g timeout:</source>
        <translation>Hän&amp;gen-Zeitlimit:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="301"/>
        <source>NAME=value, one per line</source>
        <translation>NAME=Wert, einer je Zeile</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="302"/>
        <source>Extra environment of every rank, e.g. OMP_NUM_THREADS=1 or NCCL_DEBUG=INFO</source>
        <translation>Zusätzliche Umgebung jedes Rangs, z. B. OMP_NUM_THREADS=1 oder NCCL_DEBUG=INFO</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="306"/>
        <source>En&amp;vironment:</source>
        <translation>&amp;Umgebung:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="518"/>
        <source>offline</source>
        <translation>offline</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="519"/>
        <source>draining</source>
        <translation>gesperrt</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="520"/>
        <source>online</source>
        <translation>online</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="523"/>
        <source>free slots unknown</source>
        <translation>freie Slots unbekannt</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="530"/>
        <source>free CPU slots: %L1</source>
        <translation>freie CPU-Slots: %L1</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="532"/>
        <source>%1 (%2, %3)</source>
        <translation>%1 (%2, %3)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="604"/>
        <source>Host: %1</source>
        <translation>Rechner: %1</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="661"/>
        <source>no node chosen</source>
        <translation>kein Knoten gewählt</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="663"/>
        <source>1 node</source>
        <translation>1 Knoten</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="663"/>
        <source>%L1 nodes</source>
        <translation>%L1 Knoten</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="664"/>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="665"/>
        <source>1 rank</source>
        <translation>1 Rang</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="664"/>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="665"/>
        <source>%L1 ranks</source>
        <translation>%L1 Ränge</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="666"/>
        <source>%1 × %2 = %3</source>
        <translation>%1 × %2 = %3</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="672"/>
        <source>Rank 0 runs on %1, which owns the run.</source>
        <translation>Rang 0 läuft auf %1, der den Lauf führt.</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="285"/>
        <source>&amp;Ranks per node:</source>
        <translation>&amp;Ränge pro Knoten:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="105"/>
        <source>The CNN learns more; 5 epochs take about a minute at 2 ranks on 2 cores. The MLP finishes in seconds</source>
        <translation>Das CNN lernt mehr; 5 Epochen dauern mit 2 Rängen auf 2 Kernen etwa eine Minute. Das MLP ist in Sekunden fertig</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="288"/>
        <source>World size:</source>
        <translation>Weltgröße:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="316"/>
        <source>L&amp;oad preset…</source>
        <translation>Vorl&amp;age laden…</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="317"/>
        <source>&amp;Save preset…</source>
        <translation>Vorlage speic&amp;hern…</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="318"/>
        <source>&amp;Launch</source>
        <translation>&amp;Starten</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="321"/>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="691"/>
        <source>Launch the run (Ctrl+Enter)</source>
        <translation>Den Lauf starten (Strg+Eingabe)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="338"/>
        <source>Dataset directory</source>
        <translation>Datensatzverzeichnis</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="525"/>
        <source>free: %L1 of %L2 GPUs, %L3 CPU slots</source>
        <translation>frei: %L1 von %L2 GPUs, %L3 CPU-Slots</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="677"/>
        <source>Every rank reports its metrics to the agent of the node that owns the run; the dashboard&apos;s per-rank view shows every rank, grouped by node.</source>
        <translation>Jeder Rang meldet seine Metriken an den Agenten des Knotens, dem der Lauf gehört; die Ansicht pro Rang im Dashboard zeigt jeden Rang, nach Knoten gruppiert.</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="690"/>
        <source>No node to launch on: add one in Nodes</source>
        <translation>Kein Knoten zum Starten: Fügen Sie unter „Knoten“ einen hinzu</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="695"/>
        <source>Load run preset</source>
        <translation>Laufvorlage laden</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="696"/>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="729"/>
        <source>Run presets (*.json)</source>
        <translation>Laufvorlagen (*.json)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="700"/>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="712"/>
        <source>Load preset</source>
        <translation>Vorlage laden</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="701"/>
        <source>Cannot read %1: %2</source>
        <translation>%1 kann nicht gelesen werden: %2</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="708"/>
        <source>%1 is not valid JSON: %2</source>
        <translation>%1 ist kein gültiges JSON: %2</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="727"/>
        <source>Save run preset</source>
        <translation>Laufvorlage speichern</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="734"/>
        <source>Save preset</source>
        <translation>Vorlage speichern</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="735"/>
        <source>Cannot write %1: %2</source>
        <translation>%1 kann nicht geschrieben werden: %2</translation>
    </message>
    <message>
        <source>Check all shown</source>
        <translation>Alle angezeigten auswählen</translation>
    </message>
    <message>
        <source>Checks every node the filter shows that can take the run&apos;s ranks now: online, not draining, and with a free GPU (or CPU slot, for a CPU run).</source>
        <translation>Wählt jeden angezeigten Knoten aus, der die Ränge des Laufs jetzt aufnehmen kann: online, nicht gesperrt und mit einer freien GPU (oder einem freien CPU-Slot bei einem CPU-Lauf).</translation>
    </message>
    <message>
        <source>Filter nodes by name or host</source>
        <translation>Knoten nach Name oder Host filtern</translation>
    </message>
    <message>
        <source>Uncheck all</source>
        <translation>Alle abwählen</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="1"/>
        <source>Slurm job</source>
        <translation>Slurm-Job</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="1"/>
        <source>The partition the job goes to (sbatch --partition); the cluster&apos;s default partition is listed first. Empty: the default.</source>
        <translation>Die Partition, in die der Job geht (sbatch --partition); die Standardpartition des Clusters steht zuerst. Leer: die Standardpartition.</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="1"/>
        <source>Pa&amp;rtition:</source>
        <translation>Pa&amp;rtition:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="1"/>
        <source>Nodes of the job (sbatch --nodes); the ranks per node above are its tasks per node.</source>
        <translation>Knoten des Jobs (sbatch --nodes); die Ränge pro Knoten oben sind seine Tasks pro Knoten.</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="1"/>
        <source>Job &amp;nodes:</source>
        <translation>Job-&amp;Knoten:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="1"/>
        <source>none</source>
        <translation>keine</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="1"/>
        <source>GPUs on each node of the job, asked for as the GPU request says.</source>
        <translation>GPUs auf jedem Knoten des Jobs, angefordert, wie die GPU-Anforderung es angibt.</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="1"/>
        <source>GPUs per node:</source>
        <translation>GPUs pro Knoten:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="1"/>
        <source>the partition&apos;s default</source>
        <translation>Standard der Partition</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="1"/>
        <source> min</source>
        <translation> min</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="1"/>
        <source>The job&apos;s time limit (sbatch --time). 90 s before it the trainer writes its checkpoint and stops.</source>
        <translation>Das Zeitlimit des Jobs (sbatch --time). 90 s davor schreibt der Trainer seinen Checkpoint und hält an.</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="1"/>
        <source>Time &amp;limit:</source>
        <translation>Zeit&amp;limit:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="1"/>
        <source>your default</source>
        <translation>Ihr Standard</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="1"/>
        <source>Acco&amp;unt:</source>
        <translation>Kont&amp;o:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="1"/>
        <source>the default</source>
        <translation>der Standard</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="1"/>
        <source>&amp;QOS:</source>
        <translation>&amp;QOS:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="1"/>
        <source>How this cluster asks for GPUs, {n} standing for the GPUs per node: --gpus-per-node={n}, --gres=gpu:{n}, or a typed one such as --gres=gpu:a100:{n}.</source>
        <translation>Wie dieser Cluster GPUs anfordert, {n} steht für die GPUs pro Knoten: --gpus-per-node={n}, --gres=gpu:{n} oder mit Typ, etwa --gres=gpu:a100:{n}.</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="1"/>
        <source>GPU re&amp;quest:</source>
        <translation>GPU-An&amp;forderung:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="1"/>
        <source>Requeue when a node fails</source>
        <translation>Neu einreihen, wenn ein Knoten ausfällt</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="1"/>
        <source>Unchecked (sbatch --no-requeue): a failed node ends the run, FAILED, saying so. Checked: Slurm starts the job again from the beginning.</source>
        <translation>Nicht angehakt (sbatch --no-requeue): Ein ausgefallener Knoten beendet den Lauf als FAILED und sagt es. Angehakt: Slurm startet den Job von vorn.</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="1"/>
        <source>Slurm places the job on nodes of its choice.</source>
        <translation>Slurm platziert den Job auf Knoten seiner Wahl.</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="1"/>
        <source>Slurm cluster</source>
        <translation>Slurm-Cluster</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="1"/>
        <source>Slurm cluster: %1</source>
        <translation>Slurm-Cluster: %1</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="1"/>
        <source>high</source>
        <translation>hoch</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="1"/>
        <source>normal</source>
        <translation>normal</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="1"/>
        <source>low</source>
        <translation>niedrig</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="1"/>
        <source>Queue &amp;priority:</source>
        <translation>Warteschlangen-&amp;Priorität:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/run_setup_panel.cpp" line="1"/>
        <source>When its slots are busy the run waits in the node&apos;s queue: high runs start before normal ones, normal before low, and within a priority in the order they were launched. The Queue page changes it while the run waits.</source>
        <translation>Sind seine Slots belegt, wartet der Lauf in der Warteschlange des Knotens: Läufe mit hoher Priorität starten vor normalen, normale vor niedrigen, und innerhalb einer Priorität in der Reihenfolge ihres Starts. Die Seite Warteschlange ändert sie, solange der Lauf wartet.</translation>
    </message>
</context>
<context>
    <name>ringside::gui::RunTableModel</name>
    <message>
        <location filename="../gui/core/src/run_table_model.cpp" line="101"/>
        <source>queued</source>
        <translation>wartend</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_table_model.cpp" line="103"/>
        <source>starting</source>
        <translation>startet</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_table_model.cpp" line="105"/>
        <source>running</source>
        <translation>läuft</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_table_model.cpp" line="107"/>
        <source>completed</source>
        <translation>fertig</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_table_model.cpp" line="109"/>
        <source>failed</source>
        <translation>fehlgeschlagen</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_table_model.cpp" line="111"/>
        <source>stopped</source>
        <translation>gestoppt</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_table_model.cpp" line="113"/>
        <source>unknown</source>
        <translation>unbekannt</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_table_model.cpp" line="121"/>
        <location filename="../gui/core/src/run_table_model.cpp" line="206"/>
        <source>N/A</source>
        <translation>k. A.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_table_model.cpp" line="126"/>
        <location filename="../gui/core/src/run_table_model.cpp" line="135"/>
        <source>%1 × %2</source>
        <translation>%1 × %2</translation>
    </message>
    <message numerus="yes">
        <location filename="../gui/core/src/run_table_model.cpp" line="131"/>
        <source>%Ln rank(s) on %1 nodes</source>
        <translation>
            <numerusform>%Ln Rang auf %1 Knoten</numerusform>
            <numerusform>%Ln Ränge auf %1 Knoten</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_table_model.cpp" line="217"/>
        <source>%1 %</source>
        <translation>%1 %</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_table_model.cpp" line="250"/>
        <source>Run %1</source>
        <translation>Lauf %1</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_table_model.cpp" line="254"/>
        <source>%1: %2</source>
        <translation>%1: %2</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_table_model.cpp" line="257"/>
        <location filename="../gui/core/src/run_table_model.cpp" line="314"/>
        <source>Double-click or press F2 to edit</source>
        <translation>Zum Bearbeiten doppelklicken oder F2 drücken</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_table_model.cpp" line="272"/>
        <source>Hyperparameter %1 as the run&apos;s script declared it (ringside.config)</source>
        <translation>Hyperparameter %1, wie das Skript des Laufs ihn angegeben hat (ringside.config)</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_table_model.cpp" line="279"/>
        <source>Name</source>
        <translation>Name</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_table_model.cpp" line="281"/>
        <source>State</source>
        <translation>Status</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_table_model.cpp" line="283"/>
        <source>Nodes × ranks</source>
        <translation>Knoten × Ränge</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_table_model.cpp" line="285"/>
        <source>Start</source>
        <translation>Start</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_table_model.cpp" line="287"/>
        <source>Duration</source>
        <translation>Dauer</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_table_model.cpp" line="289"/>
        <source>Final loss</source>
        <translation>Endverlust</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_table_model.cpp" line="291"/>
        <source>Best accuracy</source>
        <translation>Beste Genauigkeit</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_table_model.cpp" line="293"/>
        <source>Samples/s</source>
        <translation>Samples/s</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_table_model.cpp" line="295"/>
        <source>Tags</source>
        <translation>Tags</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_table_model.cpp" line="297"/>
        <source>Notes</source>
        <translation>Notizen</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_table_model.cpp" line="305"/>
        <source>Nodes × ranks per node</source>
        <translation>Knoten × Ränge pro Knoten</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_table_model.cpp" line="307"/>
        <source>Training loss (train/loss) at the last step</source>
        <translation>Trainingsverlust (train/loss) im letzten Schritt</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_table_model.cpp" line="309"/>
        <source>Highest test accuracy (test/accuracy) of any evaluation</source>
        <translation>Höchste Testgenauigkeit (test/accuracy) aller Auswertungen</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_table_model.cpp" line="311"/>
        <source>Mean training throughput (train/samples_per_s) over all ranks</source>
        <translation>Mittlerer Trainingsdurchsatz (train/samples_per_s) über alle Ränge</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_table_model.cpp" line="351"/>
        <source>Could not save the %1 of run %2: %3</source>
        <translation>Speichern der %1 von Lauf %2 fehlgeschlagen: %3</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_table_model.cpp" line="352"/>
        <source>tags</source>
        <translation>Tags</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_table_model.cpp" line="352"/>
        <source>notes</source>
        <translation>Notizen</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_table_model.cpp" line="381"/>
        <source>Could not read the run history: %1</source>
        <translation>Der Laufverlauf konnte nicht gelesen werden: %1</translation>
    </message>
</context>
<context>
    <name>ringside::gui::StragglerTimeline</name>
    <message>
        <source>waiting for a CPU</source>
        <translation>wartet auf eine CPU</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/straggler_timeline.cpp" line="45"/>
        <location filename="../gui/widgets/src/straggler_timeline.cpp" line="112"/>
        <source>Straggler over the run</source>
        <translation>Nachzügler im Lauf</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/straggler_timeline.cpp" line="115"/>
        <source>no straggler verdict yet</source>
        <translation>noch kein Nachzügler-Urteil</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/straggler_timeline.cpp" line="76"/>
        <source>steps %1 to %2</source>
        <translation>Schritte %1 bis %2</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/straggler_timeline.cpp" line="79"/>
        <source>%1: no straggler</source>
        <translation>%1: kein Nachzügler</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/straggler_timeline.cpp" line="82"/>
        <location filename="../gui/widgets/src/straggler_timeline.cpp" line="124"/>
        <source>rank %1</source>
        <translation>Rang %1</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/straggler_timeline.cpp" line="83"/>
        <source>rank %1 on %2</source>
        <translation>Rang %1 auf %2</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/straggler_timeline.cpp" line="84"/>
        <source>data</source>
        <translation>Daten</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/straggler_timeline.cpp" line="84"/>
        <source>compute</source>
        <translation>Rechnen</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/straggler_timeline.cpp" line="86"/>
        <source>%1: %2 held the group back (%3), up to %4 % of the step time</source>
        <translation>%1: %2 hielt die Gruppe auf (%3), bis zu %4 % der Schrittzeit</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/straggler_timeline.cpp" line="89"/>
        <source>%1: %2 held the group back (%3)</source>
        <translation>%1: %2 hielt die Gruppe auf (%3)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/straggler_timeline.cpp" line="137"/>
        <location filename="../gui/widgets/src/straggler_timeline.cpp" line="140"/>
        <source>step %1</source>
        <translation>Schritt %1</translation>
    </message>
</context>
<context>
    <name>ringside::gui::RankTableModel</name>
    <message>
        <source>%1 ranks</source>
        <translation>%1 Ränge</translation>
    </message>
</context>
<context>
    <name>ringside::gui::Queue</name>
    <message>
        <source>Queued: position %1</source>
        <translation>In der Warteschlange: Position %1</translation>
    </message>
    <message>
        <source>Queued</source>
        <translation>In der Warteschlange</translation>
    </message>
    <message>
        <source>, estimated start %1</source>
        <translation>, voraussichtlicher Start %1</translation>
    </message>
</context>
<context>
    <name>SweepText</name>
    <message>
        <location filename="../gui/core/src/sweep_trial_model.cpp" line="0"/>
        <source>Best %1</source>
        <translation>Bester Wert %1</translation>
    </message>
    <message>
        <location filename="../gui/core/src/sweep_trial_model.cpp" line="0"/>
        <source>Reason</source>
        <translation>Grund</translation>
    </message>
    <message>
        <location filename="../gui/core/src/sweep_trial_model.cpp" line="0"/>
        <source>Rung</source>
        <translation>Stufe</translation>
    </message>
    <message>
        <location filename="../gui/core/src/sweep_trial_model.cpp" line="0"/>
        <source>Runs</source>
        <translation>Läufe</translation>
    </message>
    <message>
        <location filename="../gui/core/src/sweep_trial_model.cpp" line="0"/>
        <source>Trained (%1)</source>
        <translation>Trainiert (%1)</translation>
    </message>
    <message>
        <location filename="../gui/core/src/sweep_trial_model.cpp" line="0"/>
        <source>Trial</source>
        <translation>Versuch</translation>
    </message>
    <message>
        <location filename="../gui/core/src/sweep_trial_model.cpp" line="0"/>
        <source>epochs</source>
        <translation>Epochen</translation>
    </message>
    <message>
        <location filename="../gui/core/src/sweep_trial_model.cpp" line="0"/>
        <source>paused</source>
        <translation>pausiert</translation>
    </message>
    <message>
        <location filename="../gui/core/src/sweep_trial_model.cpp" line="0"/>
        <source>paused at rung %1</source>
        <translation>pausiert auf Stufe %1</translation>
    </message>
    <message>
        <location filename="../gui/core/src/sweep_trial_model.cpp" line="0"/>
        <source>steps</source>
        <translation>Schritte</translation>
    </message>
    <message>
        <location filename="../gui/core/src/sweep_trial_model.cpp" line="0"/>
        <source>stopped early</source>
        <translation>früh gestoppt</translation>
    </message>
    <message>
        <location filename="../gui/core/src/sweep_trial_model.cpp" line="0"/>
        <source>waiting</source>
        <translation>wartet</translation>
    </message>
</context>
<context>
    <name>ringside::gui::SweepBook</name>
    <message>
        <location filename="../gui/core/src/sweep_book.cpp" line="0"/>
        <source>Sweep %1 is not known here.</source>
        <translation>Sweep %1 ist hier nicht bekannt.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/sweep_book.cpp" line="0"/>
        <source>Sweep %1: its node is not connected.</source>
        <translation>Sweep %1: sein Knoten ist nicht verbunden.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/sweep_book.cpp" line="0"/>
        <source>The sweep request did not reach its node: %1</source>
        <translation>Die Sweep-Anfrage hat ihren Knoten nicht erreicht: %1</translation>
    </message>
    <message>
        <location filename="../gui/core/src/sweep_book.cpp" line="0"/>
        <source>The sweep request failed: %1</source>
        <translation>Die Sweep-Anfrage ist fehlgeschlagen: %1</translation>
    </message>
    <message>
        <location filename="../gui/core/src/sweep_book.cpp" line="0"/>
        <source>The sweep was not started: %1</source>
        <translation>Der Sweep wurde nicht gestartet: %1</translation>
    </message>
    <message>
        <location filename="../gui/core/src/sweep_book.cpp" line="0"/>
        <source>The sweep was not started: its node is not connected.</source>
        <translation>Der Sweep wurde nicht gestartet: sein Knoten ist nicht verbunden.</translation>
    </message>
</context>
<context>
    <name>ringside::gui::SweepsPanel</name>
    <message>
        <location filename="../gui/widgets/src/sweeps_panel.cpp" line="0"/>
        <source>Each trial&apos;s metric</source>
        <translation>Metrik jedes Versuchs</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/sweeps_panel.cpp" line="0"/>
        <source>step</source>
        <translation>Schritt</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/sweeps_panel.cpp" line="0"/>
        <source>No trial has reported the sweep&apos;s metric yet</source>
        <translation>Noch kein Versuch hat die Metrik des Sweeps gemeldet</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/sweeps_panel.cpp" line="0"/>
        <source>trial %1</source>
        <translation>Versuch %1</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/sweeps_panel.cpp" line="0"/>
        <source>Trials</source>
        <translation>Versuche</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/sweeps_panel.cpp" line="0"/>
        <source>%1 (trial %2)</source>
        <translation>%1 (Versuch %2)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/sweeps_panel.cpp" line="0"/>
        <source>%1 of %2 ended</source>
        <translation>%1 von %2 beendet</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/sweeps_panel.cpp" line="0"/>
        <source>%1: %2 (%3), %4 %5, %6.</source>
        <translation>%1: %2 (%3), %4 %5, %6.</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/sweeps_panel.cpp" line="0"/>
        <source>A sweep spec as JSON (docs/sweeps.md): base run, parameters, method, metric, early stopping</source>
        <translation>Eine Sweep-Spezifikation als JSON (docs/sweeps.md): Basislauf, Parameter, Methode, Metrik, frühes Stoppen</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/sweeps_panel.cpp" line="0"/>
        <source>ASHA, eta %1</source>
        <translation>ASHA, eta %1</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/sweeps_panel.cpp" line="0"/>
        <source>Add trials</source>
        <translation>Versuche hinzufügen</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/sweeps_panel.cpp" line="0"/>
        <source>Best</source>
        <translation>Bester Wert</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/sweeps_panel.cpp" line="0"/>
        <source>Best: trial %1 (%2), %3 %4.</source>
        <translation>Bester: Versuch %1 (%2), %3 %4.</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/sweeps_panel.cpp" line="0"/>
        <source>Compare</source>
        <translation>Vergleichen</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/sweeps_panel.cpp" line="0"/>
        <source>Compare the runs of the selected trials</source>
        <translation>Die Läufe der gewählten Versuche vergleichen</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/sweeps_panel.cpp" line="0"/>
        <source>Double-click a trial to open its run</source>
        <translation>Doppelklick auf einen Versuch öffnet seinen Lauf</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/sweeps_panel.cpp" line="0"/>
        <source>Draw this many more trials (a completed sweep runs again)</source>
        <translation>So viele weitere Versuche ziehen (ein abgeschlossener Sweep läuft wieder)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/sweeps_panel.cpp" line="0"/>
        <source>End the sweep: its running trials are stopped</source>
        <translation>Den Sweep beenden: seine laufenden Versuche werden gestoppt</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/sweeps_panel.cpp" line="0"/>
        <source>Export CSV…</source>
        <translation>CSV exportieren…</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/sweeps_panel.cpp" line="0"/>
        <source>Export trials as CSV</source>
        <translation>Versuche als CSV exportieren</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/sweeps_panel.cpp" line="0"/>
        <source>No node to start the sweep on: add one in Nodes.</source>
        <translation>Kein Knoten, auf dem der Sweep starten kann: unter Knoten einen hinzufügen.</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/sweeps_panel.cpp" line="0"/>
        <source>No sweep yet. Start one from a sweep spec file (docs/sweeps.md), or with the example client&apos;s sweep command.</source>
        <translation>Noch kein Sweep. Einen aus einer Sweep-Spezifikationsdatei (docs/sweeps.md) starten oder mit dem sweep-Befehl des Beispiel-Clients.</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/sweeps_panel.cpp" line="0"/>
        <source>Node:</source>
        <translation>Knoten:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/sweeps_panel.cpp" line="0"/>
        <source>Pause</source>
        <translation>Pausieren</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/sweeps_panel.cpp" line="0"/>
        <source>Queue no new trial; queued trials leave the queue, running ones go on</source>
        <translation>Keinen neuen Versuch einreihen; eingereihte verlassen die Warteschlange, laufende laufen weiter</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/sweeps_panel.cpp" line="0"/>
        <source>Rerun trial</source>
        <translation>Versuch wiederholen</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/sweeps_panel.cpp" line="0"/>
        <source>Resume</source>
        <translation>Fortsetzen</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/sweeps_panel.cpp" line="0"/>
        <source>Run the selected trial again from the start with the same values</source>
        <translation>Den gewählten Versuch mit denselben Werten von vorn laufen lassen</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/sweeps_panel.cpp" line="0"/>
        <source>Start sweep from file</source>
        <translation>Sweep aus Datei starten</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/sweeps_panel.cpp" line="0"/>
        <source>Start sweep from file…</source>
        <translation>Sweep aus Datei starten…</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/sweeps_panel.cpp" line="0"/>
        <source>Started</source>
        <translation>Gestartet</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/sweeps_panel.cpp" line="0"/>
        <source>Stop</source>
        <translation>Stoppen</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/sweeps_panel.cpp" line="0"/>
        <source>Sweep</source>
        <translation>Sweep</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/sweeps_panel.cpp" line="0"/>
        <source>Sweep specs (*.json)</source>
        <translation>Sweep-Spezifikationen (*.json)</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/sweeps_panel.cpp" line="0"/>
        <source>The node whose agent runs a sweep started from a file</source>
        <translation>Der Knoten, dessen Agent einen aus einer Datei gestarteten Sweep ausführt</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/sweeps_panel.cpp" line="0"/>
        <source>running</source>
        <translation>läuft</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/sweeps_panel.cpp" line="0"/>
        <source>completed</source>
        <translation>abgeschlossen</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/sweeps_panel.cpp" line="0"/>
        <source>stopped</source>
        <translation>gestoppt</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/sweeps_panel.cpp" line="0"/>
        <source>search</source>
        <translation>Suche</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/sweeps_panel.cpp" line="0"/>
        <source>no early stopping</source>
        <translation>kein frühes Stoppen</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/sweeps_panel.cpp" line="0"/>
        <source>median stopping rule</source>
        <translation>Median-Stoppregel</translation>
    </message>
</context>
<context>
    <name>ringside::gui::QueuePanel</name>
    <message>
        <location filename="../gui/widgets/src/queue_panel.cpp" line="1"/>
        <source>%1 %2. Each starts by itself when its slots are free, in order of priority, then of queueing.</source>
        <translation>%1 %2. Jeder startet von selbst, sobald seine Slots frei sind, nach Priorität, dann in der Reihenfolge des Einreihens.</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/queue_panel.cpp" line="1"/>
        <source>%L1 runs waiting</source>
        <translation>%L1 Läufe warten</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/queue_panel.cpp" line="1"/>
        <source>1 run waiting</source>
        <translation>1 Lauf wartet</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/queue_panel.cpp" line="1"/>
        <source>Cancel run</source>
        <translation>Lauf abbrechen</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/queue_panel.cpp" line="1"/>
        <source>Move down</source>
        <translation>Nach unten</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/queue_panel.cpp" line="1"/>
        <source>Move up</source>
        <translation>Nach oben</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/queue_panel.cpp" line="1"/>
        <source>No run is waiting. A run launched while its slots are busy waits here and starts by itself when they are free, also while the GUI is closed.</source>
        <translation>Kein Lauf wartet. Ein Lauf, der gestartet wird, während seine Slots belegt sind, wartet hier und startet von selbst, sobald sie frei sind, auch bei geschlossener Oberfläche.</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/queue_panel.cpp" line="1"/>
        <source>One place towards the head of its node&apos;s queue, among the runs of its priority</source>
        <translation>Einen Platz nach vorn in der Warteschlange seines Knotens, unter den Läufen seiner Priorität</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/queue_panel.cpp" line="1"/>
        <source>One place towards the tail, among the runs of its priority</source>
        <translation>Einen Platz nach hinten, unter den Läufen seiner Priorität</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/queue_panel.cpp" line="1"/>
        <source>Priority:</source>
        <translation>Priorität:</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/queue_panel.cpp" line="1"/>
        <source>Runs of a higher priority start first; within a priority, in the order they were queued</source>
        <translation>Läufe höherer Priorität starten zuerst; innerhalb einer Priorität in der Reihenfolge des Einreihens</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/queue_panel.cpp" line="1"/>
        <source>Take the run out of the queue: it never starts and stays in the History as stopped</source>
        <translation>Den Lauf aus der Warteschlange nehmen: Er startet nie und bleibt im Verlauf als gestoppt</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/queue_panel.cpp" line="1"/>
        <source>on %L1 nodes</source>
        <translation>auf %L1 Knoten</translation>
    </message>
    <message>
        <location filename="../gui/widgets/src/queue_panel.cpp" line="1"/>
        <source>on 1 node</source>
        <translation>auf 1 Knoten</translation>
    </message>
</context>
<context>
    <name>ringside::gui::QueueTableModel</name>
    <message>
        <location filename="../gui/core/src/queue_table_model.cpp" line="1"/>
        <source>%1 (offline)</source>
        <translation>%1 (offline)</translation>
    </message>
    <message>
        <location filename="../gui/core/src/queue_table_model.cpp" line="1"/>
        <source>%1 on %L2 nodes</source>
        <translation>%1 auf %L2 Knoten</translation>
    </message>
    <message>
        <location filename="../gui/core/src/queue_table_model.cpp" line="1"/>
        <source>%L1 CPU slots</source>
        <translation>%L1 CPU-Slots</translation>
    </message>
    <message>
        <location filename="../gui/core/src/queue_table_model.cpp" line="1"/>
        <source>%L1 GPUs</source>
        <translation>%L1 GPUs</translation>
    </message>
    <message>
        <location filename="../gui/core/src/queue_table_model.cpp" line="1"/>
        <source>1 CPU slot</source>
        <translation>1 CPU-Slot</translation>
    </message>
    <message>
        <location filename="../gui/core/src/queue_table_model.cpp" line="1"/>
        <source>1 GPU</source>
        <translation>1 GPU</translation>
    </message>
    <message>
        <location filename="../gui/core/src/queue_table_model.cpp" line="1"/>
        <source>Estimated start</source>
        <translation>Voraussichtlicher Start</translation>
    </message>
    <message>
        <location filename="../gui/core/src/queue_table_model.cpp" line="1"/>
        <source>No estimate yet: a run it waits for has no progress to go by (a PyTorch script without a step count), or it waits behind another queued run.</source>
        <translation>Noch keine Schätzung: Ein Lauf, auf den er wartet, hat keinen messbaren Fortschritt (ein PyTorch-Skript ohne Schrittzahl), oder er wartet hinter einem anderen Lauf der Warteschlange.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/queue_table_model.cpp" line="1"/>
        <source>Node</source>
        <translation>Knoten</translation>
    </message>
    <message>
        <location filename="../gui/core/src/queue_table_model.cpp" line="1"/>
        <source>Position</source>
        <translation>Position</translation>
    </message>
    <message>
        <location filename="../gui/core/src/queue_table_model.cpp" line="1"/>
        <source>Priority</source>
        <translation>Priorität</translation>
    </message>
    <message>
        <location filename="../gui/core/src/queue_table_model.cpp" line="1"/>
        <source>Queued at</source>
        <translation>Eingereiht um</translation>
    </message>
    <message>
        <location filename="../gui/core/src/queue_table_model.cpp" line="1"/>
        <source>Run</source>
        <translation>Lauf</translation>
    </message>
    <message>
        <location filename="../gui/core/src/queue_table_model.cpp" line="1"/>
        <source>Takes</source>
        <translation>Belegt</translation>
    </message>
    <message>
        <location filename="../gui/core/src/queue_table_model.cpp" line="1"/>
        <source>The node is offline: this is what its agent said last. The run is still in its queue, which moves without the GUI.</source>
        <translation>Der Knoten ist offline: Dies hat sein Agent zuletzt gemeldet. Der Lauf ist weiter in seiner Warteschlange, die sich ohne die Oberfläche weiterbewegt.</translation>
    </message>
    <message>
        <location filename="../gui/core/src/queue_table_model.cpp" line="1"/>
        <source>Waiting for</source>
        <translation>Wartet auf</translation>
    </message>
    <message>
        <location filename="../gui/core/src/queue_table_model.cpp" line="1"/>
        <source>high</source>
        <translation>hoch</translation>
    </message>
    <message>
        <location filename="../gui/core/src/queue_table_model.cpp" line="1"/>
        <source>low</source>
        <translation>niedrig</translation>
    </message>
    <message>
        <location filename="../gui/core/src/queue_table_model.cpp" line="1"/>
        <source>normal</source>
        <translation>normal</translation>
    </message>
</context>
<context>
    <name>ringside::gui::FreedesktopNotifications</name>
    <message>
        <location filename="../gui/core/src/run_notifier.cpp" line="1"/>
        <source>Desktop notifications are off: there is no session bus (%1).</source>
        <translation>Desktop-Benachrichtigungen sind aus: Es gibt keinen Sitzungsbus (%1).</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_notifier.cpp" line="1"/>
        <source>The desktop&apos;s notification service did not take a notification: %1</source>
        <translation>Der Benachrichtigungsdienst des Desktops hat eine Benachrichtigung nicht angenommen: %1</translation>
    </message>
</context>
<context>
    <name>ringside::gui::RunNotifier</name>
    <message>
        <location filename="../gui/core/src/run_notifier.cpp" line="1"/>
        <source> in %1</source>
        <translation> in %1</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_notifier.cpp" line="1"/>
        <source> on %1</source>
        <translation> auf %1</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_notifier.cpp" line="1"/>
        <source>, after waiting %1 in the queue</source>
        <translation>, nach %1 Wartezeit in der Warteschlange</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_notifier.cpp" line="1"/>
        <source>Could not write %1 (the runs this GUI launched, for notifications): %2</source>
        <translation>%1 konnte nicht geschrieben werden (die von dieser Oberfläche gestarteten Läufe, für Benachrichtigungen): %2</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_notifier.cpp" line="1"/>
        <source>Run completed</source>
        <translation>Lauf abgeschlossen</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_notifier.cpp" line="1"/>
        <source>Run failed</source>
        <translation>Lauf fehlgeschlagen</translation>
    </message>
    <message>
        <location filename="../gui/core/src/run_notifier.cpp" line="1"/>
        <source>Run started</source>
        <translation>Lauf gestartet</translation>
    </message>
</context>
</TS>
