"""The Google adapter: gspread with the endpoint seam (``client``) and classified reads (``reader``)."""
