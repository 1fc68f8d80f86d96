import torch
import torch.multiprocessing as mp
from src.model import ActorCritic
from src.optimizer import GlobalAdam
from src.process import local_train

if __name__ == "__main__":
    torch.manual_seed(123)
    global_model = ActorCritic(4, 2)
    global_model.share_memory()
    optimizer = GlobalAdam(global_model.parameters(), lr=1e-4)
    processes = []
    for index in range(2):
        process = mp.Process(target=local_train, args=(index, global_model, optimizer, 3))
        process.start()
        processes.append(process)
    for process in processes:
        process.join()
