Here is my solution for step 902.1.

```python
import numpy as np

def square(x):
    return x ** 2

print('demo run')
```

It should work.
