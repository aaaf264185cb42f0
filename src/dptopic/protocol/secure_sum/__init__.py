"""The secure sum's protocol side, one module per mode."""
__all__: list = []
