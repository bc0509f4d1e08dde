# Branches a thread the way llm 0.36 can: its command line has no fork, its Python API does.
# LogStore.fork starts a thread at an earlier message of another (recording forked_from); a
# prompt is then sent in the new thread and logged to it, after which `llm --cid` continues it.
# Usage: python fork.py LOGS.DB THREAD POSITION NAME QUESTION (position 0: the first message).
import sys

import llm
import sqlite_utils
from llm.logs import LogStore

db_path, thread, position, name, question = sys.argv[1:6]
db = sqlite_utils.Database(db_path)
store = LogStore(db)
chain = store.thread_messages(thread)
# The hashes of the thread's messages, first to last.
hashes = [
    row["hash"]
    for row in db.query(
        "with recursive up(hash, parent_hash, depth) as ("
        " select m.hash, m.parent_hash, 0 from messages m join threads t on t.tip_message_hash = m.hash where t.id = ?"
        " union all select m.hash, m.parent_hash, depth + 1 from messages m join up on m.hash = up.parent_hash)"
        " select hash from up order by depth desc",
        [thread],
    )
]
assert len(hashes) == len(chain)
fork = store.fork(hashes[int(position)], name=name, forked_from=thread)
conversation = llm.get_model("echo").conversation()
conversation.id = fork
conversation.loaded_messages = store.thread_messages(fork)
response = conversation.prompt(question)
response.text()
response.log_to_db(db)
print(fork)
