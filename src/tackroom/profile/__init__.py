"""The neutral profile: its model, its loader, and the renderers that write it natively."""
