Here is my solution for step 902.2.

```python
import numpy as np

def sum_squares(v):
    return float(sum(square(t) for t in v))

print('demo run')
```

It should work.
