"""The loop model: what happens to autograd graphs in each loop and function body."""
