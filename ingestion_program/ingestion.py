"""metascore ingestion program for Codabench (thin wrapper).

Usage: python3 ingestion.py INPUT_DATA OUTPUT_DIR PROGRAM_DIR SUBMISSION_DIR
(Codabench: /app/input_data /app/output /app/program /app/ingested_program)

Checks what the organizer submitted (an export file or an outputs tree) and writes the
canonical long table metascore_long.csv to OUTPUT_DIR for the scoring program. The work
happens in metascore.program.ingest_main; a vendored `metascore/` folder next to this
file wins over an installed package.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if os.path.isdir(os.path.join(HERE, "metascore")):
    sys.path.insert(0, HERE)

try:
    from metascore.program import ingest_main
except ImportError as exc:  # neither vendored nor installed
    print(f"metascore: error: cannot import the metascore package ({exc}); vendor it next "
          "to ingestion.py or install it in the competition's Docker image.", file=sys.stderr)
    sys.exit(1)


def main(argv):
    if len(argv) != 5:
        print("usage: ingestion.py INPUT_DATA OUTPUT_DIR PROGRAM_DIR SUBMISSION_DIR",
              file=sys.stderr)
        return 2
    return ingest_main(*argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
