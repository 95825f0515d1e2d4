"""The sequence rows of ``nn.RNN``, ``nn.LSTM`` and ``nn.GRU`` (``rnn_scan_p``,
``lstm_scan_p``, ``gru_scan_p`` and the first-order ``lstm_bwd_p``), re-exported from
``duograd/rows/scan.py``, where they and their back-propagation through time are; the
layers that call them are in ``rnn.py``.

>>> from duograd.nn import _scan
>>> _scan.lstm_scan_p.name
'lstm_scan'
"""

from __future__ import annotations

from ..rows.scan import gru_scan_p, lstm_bwd_p, lstm_scan_p, rnn_scan_p  # noqa: F401

__all__ = ["rnn_scan_p", "lstm_scan_p", "gru_scan_p"]
