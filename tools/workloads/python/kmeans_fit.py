"""Five scikit-learn KMeans fits, as a new user's script makes them (Debian's python3-sklearn):
the ground truth of the ways a python: spec names KMeans.fit. Prints {"fits": 5} last."""
import json

import numpy as np
from sklearn.cluster import KMeans

FITS = 5

x = np.random.default_rng(0).normal(size=(2000, 2))
for seed in range(FITS):
    KMeans(n_clusters=3, n_init=1, random_state=seed).fit(x)
print(json.dumps({"fits": FITS}))
