"""``tapegrad.profiler``: where a step's time goes, op by op, as ``torch.profiler`` shows it.

>>> with torch.profiler.profile() as prof:
...     loss = model(x).sum(); loss.backward()
>>> print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))

While a profile is recording, every op call is timed (a function transform, like ``vmap``'s: the ops called
inside an op's own code count towards it) and so is every node of a backward pass (as torch names them,
``autograd::engine::evaluate_function: AddmmBackward0``); ``record_function("name")`` adds a named range, whose
ops are its children ("Self CPU" excludes them). Op names follow torch's (``aten::addmm``, ``aten::relu``),
derived from each op's node name. Only CPU time exists (there is no GPU); ``record_shapes`` adds the input
shapes; memory and FLOP counts are not measured. The overhead is a few microseconds per op, so profile a few
steps, not a whole training run.
"""

from ._profile import (EventList, FunctionEvent, ProfilerAction, ProfilerActivity, profile, record_function,
                       schedule, supported_activities, tensorboard_trace_handler)

__all__ = ["profile", "record_function", "ProfilerActivity", "ProfilerAction", "schedule",
           "tensorboard_trace_handler", "supported_activities", "EventList", "FunctionEvent"]
