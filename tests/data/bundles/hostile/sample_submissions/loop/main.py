import sys
while True:
    pass
