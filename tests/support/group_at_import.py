"""A module that records, when it is imported, whether the process group already exists."""

import torch.distributed

GROUP_EXISTED_AT_IMPORT = torch.distributed.is_initialized()


def group_existed_at_import(rank, world_size):
    return GROUP_EXISTED_AT_IMPORT
