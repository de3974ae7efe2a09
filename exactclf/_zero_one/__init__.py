"""The minimum weighted 0-1 loss of an affine classifier: what ICE and Deep-ICE stand on.

Points are the unique rows of a data set with the weights of each class at them
(:func:`exactclf._base.validate_binary`). On them this package holds the exact searches
(the enumeration of :mod:`._min01` with its kernels, the IIS cover of :mod:`._iis` and its
master :mod:`._cover`), the incumbents (:mod:`._incumbent`, :mod:`._local_search`,
:mod:`._milp`), the proven lower bounds (:mod:`._bounds`, :mod:`._local_cover`) and the
schedule that runs them within one budget (:mod:`._portfolio`).
:class:`~exactclf.linear.ICEClassifier` calls the schedule; the maxout networks of
:mod:`exactclf.maxout` solve the linear problem as a seed and reuse the enumeration, the
IIS oracle and the covers on their own sub-problems.
"""
