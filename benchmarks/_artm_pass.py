"""Seconds per offline pass of BigARTM over a document-term matrix (run in a venv with bigartm 0.9.2).

    PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python python _artm_pass.py BOW.npz TOPICS THREADS PASSES

BOW.npz holds ``data``, ``indices``, ``indptr``, ``shape`` of a documents x words CSR matrix. Prints one JSON line.
"""
import json
import sys
import tempfile
import time

import artm
import numpy as np
import scipy.sparse as sp

path, K, threads, passes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
z = np.load(path, allow_pickle=False)
X = sp.csr_matrix((z["data"], z["indices"], z["indptr"]), shape=tuple(z["shape"]))
n_wd = np.asarray(X.T.todense())
vocab = {i: f"w{i}" for i in range(X.shape[1])}
with tempfile.TemporaryDirectory() as tmp:
    bv = artm.BatchVectorizer(data_format="bow_n_wd", n_wd=n_wd, vocabulary=vocab, target_folder=tmp + "/batches")
    model = artm.ARTM(num_topics=K, dictionary=bv.dictionary, num_processors=threads, seed=0)
    model.fit_offline(bv, num_collection_passes=1)          # warm-up
    t = time.perf_counter()
    model.fit_offline(bv, num_collection_passes=passes)
    per_pass = (time.perf_counter() - t) / passes
    phi = model.get_phi().to_numpy().T                       # K x V
print(json.dumps({"seconds_per_pass": per_pass, "phi_shape": list(phi.shape)}))
