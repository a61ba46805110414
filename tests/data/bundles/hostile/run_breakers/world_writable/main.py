# issue 49, 5: a folder and a scores file any local user may write (0777, 0666) in the
# output: kept so in --out, another user of the machine could change the job's files there.
import json
import os
import sys

out = sys.argv[1]
folder = os.path.join(out, "open")
os.mkdir(folder)
os.chmod(folder, 0o777)
with open(os.path.join(folder, "note.txt"), "w") as handle:
    handle.write("anyone may write here\n")
os.chmod(os.path.join(folder, "note.txt"), 0o666)
with open(os.path.join(out, "scores.json"), "w") as handle:
    json.dump({"score": 0.5}, handle)
os.chmod(os.path.join(out, "scores.json"), 0o666)
print("modes:", {name: oct(os.stat(os.path.join(out, name)).st_mode & 0o7777) for name in os.listdir(out)})
