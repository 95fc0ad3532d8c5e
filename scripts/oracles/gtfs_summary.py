"""Loads a GTFS feed with gtfs-kit and prints what the tests compare with the bundle, as JSON: stops (id, name, lat,
lon), routes (id, short name, long name, type), and service hours per line and day category: for each route and
service, the sum of (end - start) over its frequencies rows, in minutes, read through gtfs-kit's frequencies table."""
import json
import sys

import gtfs_kit

feed = gtfs_kit.read_feed(sys.argv[1], dist_units="km")


def minutes(text):
    hours, mins, secs = (int(part) for part in text.split(":"))
    return hours * 60 + mins + secs / 60


stops = [
    {"id": row.stop_id, "name": row.stop_name, "lat": float(row.stop_lat), "lon": float(row.stop_lon)}
    for row in feed.stops.itertuples()
]
routes = [
    {"id": row.route_id, "short": row.route_short_name, "long": row.route_long_name, "type": int(row.route_type)}
    for row in feed.routes.itertuples()
]
trips = feed.trips.set_index("trip_id")
hours = {}
for row in feed.frequencies.itertuples():
    trip = trips.loc[row.trip_id]
    key = f"{trip.route_id}|{trip.service_id}"
    hours[key] = hours.get(key, 0) + minutes(row.end_time) - minutes(row.start_time)
services = {}
if feed.calendar_dates is not None:
    for row in feed.calendar_dates.itertuples():
        services.setdefault(row.service_id, []).append([str(row.date), int(row.exception_type)])
print(json.dumps({"stops": stops, "routes": routes, "serviceMinutes": hours, "calendarDates": services}, ensure_ascii=False))
