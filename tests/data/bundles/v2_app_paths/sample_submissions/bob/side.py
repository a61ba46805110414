import os
import sys

os.makedirs(sys.argv[1], exist_ok=True)  # /app/shared: the container's own layer on the worker
with open(os.path.join(sys.argv[1], "note.txt"), "w") as handle:
    handle.write("written where the worker mounts nothing\n")
