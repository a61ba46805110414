"""k nearest neighbours (k = 3), but the regression task is not implemented: it raises."""

import numpy as np


class Model:
    def fit(self, X, y, task_type):
        if task_type == "regression":
            raise NotImplementedError("dave's model does not handle regression yet")
        self.X, self.y, self.task_type = X, y, task_type

    def predict(self, X):
        d = ((X[:, None, :] - self.X[None, :, :]) ** 2).sum(axis=2)
        nearest = self.y[np.argsort(d, axis=1, kind="stable")[:, :3]]
        if self.task_type == "classification":
            return np.array([np.bincount(row.astype(int)).argmax() for row in nearest])
        return np.clip(nearest.mean(axis=1), 0.1, 0.9)
