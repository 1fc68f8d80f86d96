def release_shared_grads(model):
    for p in model.parameters():
        p._grad = None
