"""Nearest centroid for classes, least squares for numbers (probabilities clipped)."""

import numpy as np


class Model:
    def fit(self, X, y, task_type):
        self.task_type = task_type
        if task_type == "classification":
            self.classes = np.unique(y)
            self.centroids = np.array([X[y == c].mean(axis=0) for c in self.classes])
        else:
            A = np.column_stack([X, np.ones(len(X))])
            self.coef = np.linalg.lstsq(A, y, rcond=None)[0]

    def predict(self, X):
        if self.task_type == "classification":
            d = ((X[:, None, :] - self.centroids[None, :, :]) ** 2).sum(axis=2)
            return self.classes[np.argmin(d, axis=1)]
        p = np.column_stack([X, np.ones(len(X))]) @ self.coef
        return np.clip(p, 0.02, 0.98) if self.task_type == "probability" else p
