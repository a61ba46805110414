"""k nearest neighbours (k = 5) for every task."""

import numpy as np

K = 5


class Model:
    def fit(self, X, y, task_type):
        self.X, self.y, self.task_type = X, y, task_type

    def predict(self, X):
        d = ((X[:, None, :] - self.X[None, :, :]) ** 2).sum(axis=2)
        nearest = self.y[np.argsort(d, axis=1, kind="stable")[:, :K]]
        if self.task_type == "classification":
            return np.array([np.bincount(row.astype(int)).argmax() for row in nearest])
        p = nearest.mean(axis=1)
        return np.clip(p, 0.05, 0.95) if self.task_type == "probability" else p
