#!/bin/bash
cd /app
if ! grep -rq --include="*.py" fetch_data /app && grep -q "def load_records" store.py && [ "$(python3 main.py)" = "3 records" ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
