"""A model with a sign error, worse than the baseline on every task: it picks the class
whose centroid is farthest, predicts the largest training target, and a probability of 0.9."""

import numpy as np


class Model:
    def fit(self, X, y, task_type):
        self.task_type = task_type
        if task_type == "classification":
            self.classes = np.unique(y)
            self.centroids = np.array([X[y == c].mean(axis=0) for c in self.classes])
        else:
            self.constant = float(np.max(y)) if task_type == "regression" else 0.9

    def predict(self, X):
        if self.task_type == "classification":
            d = ((X[:, None, :] - self.centroids[None, :, :]) ** 2).sum(axis=2)
            return self.classes[np.argmax(d, axis=1)]
        return np.full(len(X), self.constant)
