#!/usr/bin/python3
"""ctest: the German translation is complete. Extracts every tr() string from the GUI sources
with lupdate into a scratch .ts and checks that translations/ringside_de.ts translates each one
(not unfinished, not empty; plural messages with all their forms).
Usage: translations_test.py LUPDATE TS_FILE SOURCE_DIR..."""
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET


def messages(path):
    found = {}
    for context in ET.parse(path).getroot().iter("context"):
        # lupdate run by the build resolves namespaces ("ringside::gui::NodesPanel"); a bare run
        # over the source folders may not ("NodesPanel"): compare the class name only.
        name = (context.findtext("name") or "").split("::")[-1]
        for message in context.iter("message"):
            found[(name, message.findtext("source"))] = message
    return found


def main():
    lupdate, ts_file, sources = sys.argv[1], sys.argv[2], sys.argv[3:]
    with tempfile.TemporaryDirectory() as scratch:
        extracted = os.path.join(scratch, "extracted.ts")
        subprocess.run([lupdate, "-silent", "-no-obsolete", *sources, "-ts", extracted],
                       check=True)
        wanted = messages(extracted)
    have = messages(ts_file)
    # A bare lupdate cannot always tell which class a tr() in a nested helper class belongs to;
    # fall back to the same source text in any context.
    by_source = {source: message for (_, source), message in have.items()}
    problems = []
    for (context, source), _ in sorted(wanted.items()):
        message = have.get((context, source)) or by_source.get(source)
        if message is None:
            problems.append(f"missing: {context}: {source!r}")
            continue
        translation = message.find("translation")
        if translation is None or translation.get("type") in ("unfinished", "vanished", "obsolete"):
            problems.append(f"unfinished: {context}: {source!r}")
            continue
        forms = translation.findall("numerusform")
        if message.get("numerus") == "yes":
            if len(forms) < 2 or any(not (f.text or "").strip() for f in forms):
                problems.append(f"plural forms missing: {context}: {source!r}")
        elif not (translation.text or "").strip():
            problems.append(f"empty: {context}: {source!r}")
    for problem in problems[:50]:
        print(problem)
    print(f"{len(wanted)} strings in the sources, {len(problems)} not translated in {ts_file}")
    print("run `cmake --build build/release --target update_translations`, then translate "
          "the new entries" if problems else "German translation complete")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
