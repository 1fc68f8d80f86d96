"""The base of the master agent: the settings every agent reads."""


class Agent(object):
    def __init__(self, args):
        self.enable_lstm = args["enable_lstm"]
        self.hidden_dim = args["hidden_dim"]
        self.rollout_steps = args["rollout_steps"]
        self.steps = args["steps"]
