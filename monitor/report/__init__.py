"""The status page: the fleet, its history and the monitor's own health, as one HTML file or JSON."""
