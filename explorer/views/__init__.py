"""What each lesson page shows, computed from the layers below and cached for every session:
cached results are read-only (numpy arrays with write=False, frozen dataclasses).  No Streamlit."""
