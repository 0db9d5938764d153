"""Lets the lesson scripts run from a source checkout (``python examples/lessons/01_relu_dead_zone.py``)."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src"))
