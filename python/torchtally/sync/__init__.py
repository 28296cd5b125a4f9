"""The sync layer: the packed sync protocol and what carries it, built from declared states
only and imported by the base layer, never the other way round. By file::

  protocol.py     one sync, step by step (sync_states)
  plan.py         state specs and the plan: what one sync exchanges, and where
  header.py       the header: its words, its reused buffers, the table every rank reads, and a
                  small plan's data within it (packed and reduced there)
  fingerprint.py  options described exactly and compared (what the plan's fingerprint hashes)
  exchange.py     how a gloo group's headers travel (all_to_all, or a ring where cores are short)
  failure.py      a failed or timed-out collective turned into a SyncError naming the lost ranks
  rollcall.py     the roll call that finds those ranks, over addresses every header carries
  dist.py         torch.distributed bookkeeping: group info, sync ids, timeouts, waits
  transport.py    a transport registered for a group carries the data collectives
  nccl.py         the NCCL transport (public face: torchtally.nccl)
"""
