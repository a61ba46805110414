"""metascore meta-scoring program for Codabench/CodaLab (thin wrapper).

Usage: python3 score.py INPUT_DIR OUTPUT_DIR   (Codabench: /app/input /app/output)

INPUT_DIR/ref/metascore.yaml is the configuration; INPUT_DIR/res holds the scores to
rank (an export file, an outputs tree, or the ingestion program's metascore_long.csv).
All the work happens in metascore.program.score_main; this file only finds the package
(a vendored copy in a `metascore/` folder next to it wins over an installed one) and
passes its own folder, whose organizer_key.pub says whose signed results export it ranks.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if os.path.isdir(os.path.join(HERE, "metascore")):
    sys.path.insert(0, HERE)

try:
    from metascore.program import score_main
except ImportError as exc:  # neither vendored nor installed
    print(f"metascore: error: cannot import the metascore package ({exc}); vendor it next "
          "to score.py or install it in the competition's Docker image.", file=sys.stderr)
    sys.exit(1)


def main(argv):
    if len(argv) != 3:
        print("usage: score.py INPUT_DIR OUTPUT_DIR", file=sys.stderr)
        return 2
    return score_main(argv[1], argv[2], program_dir=HERE)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
