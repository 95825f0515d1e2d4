"""The scalar engines: the clarity half of duograd.

- ``engine``  : ``Value``, reverse mode on Python floats (the teaching model);
- ``nn``      : ``Neuron``, ``Layer``, ``MLP`` built from Values;
- ``forward`` : ``Dual``, forward mode on floats;
- ``higher``  : ``Var`` and ``grad``, whose gradients can be differentiated again.

Nothing here touches the tensor engine.

>>> from duograd.scalar import Value
>>> (Value(2.0) * 3).data
6.0
"""

from duograd.scalar.engine import Value

__all__ = ["Value"]
