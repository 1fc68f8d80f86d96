def detach_hidden_(hidden):
    """Cut the graph behind each state tensor in place, keeping its values."""
    for h in hidden:
        h.detach_()
