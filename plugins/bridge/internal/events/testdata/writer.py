#!/usr/bin/env python3
"""The agent's side of the events tests: a separate process writing state.db
with Python's sqlite3 in WAL mode, one commit per message.

    writer.py append PATH SESSION_ID N PREFIX
                         appends N user messages "PREFIX i", one commit each
    writer.py step PATH SESSION_ID
                         appends one message per line read from stdin (the
                         line is its content) and answers "ok" after the commit
"""

import sys
import sqlite3
import time


def connect(path):
    db = sqlite3.connect(path, timeout=10)
    db.execute("PRAGMA journal_mode=WAL")
    return db


def insert(db, session_id, content):
    db.execute("INSERT INTO messages (session_id, role, content, timestamp) VALUES (?,?,?,?)",
               (session_id, "user", content, time.time()))
    db.commit()


def main(argv):
    if len(argv) == 6 and argv[1] == "append":
        db = connect(argv[2])
        for i in range(int(argv[4])):
            insert(db, argv[3], "%s %d" % (argv[5], i))
        db.close()
    elif len(argv) == 4 and argv[1] == "step":
        db = connect(argv[2])
        for line in sys.stdin:
            insert(db, argv[3], line.rstrip("\n"))
            sys.stdout.write("ok\n")
            sys.stdout.flush()
        db.close()
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
