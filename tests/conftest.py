import os

import torch

torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "2")))
