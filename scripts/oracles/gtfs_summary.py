"""Loads a GTFS feed with gtfs-kit and prints, as JSON, what the tests compare with the bundle: stops (id, name, lat,
lon), routes (id, short name, long name, type), and for each date given after the feed: the services gtfs-kit finds
active that day (calendar.txt and calendar_dates.txt), and per route the service minutes (the sum of end - start
over the active trips' frequencies rows) and the departures gtfs-kit's expand_frequencies makes of them."""
import json
import sys

import gtfs_kit

feed = gtfs_kit.read_feed(sys.argv[1], dist_units="km")
expanded = gtfs_kit.expand_frequencies(feed)


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
days = {}
for date in sys.argv[2:]:
    services = sorted(gtfs_kit.get_active_services(feed, date))
    trips = feed.trips[feed.trips.service_id.isin(services)].set_index("trip_id")
    service_minutes = {}
    for row in feed.frequencies.itertuples():
        if row.trip_id in trips.index:
            route = trips.loc[row.trip_id].route_id
            service_minutes[route] = service_minutes.get(route, 0) + minutes(row.end_time) - minutes(row.start_time)
    departures = expanded.trips[expanded.trips.service_id.isin(services)].groupby("route_id").size()
    days[date] = {
        "services": services,
        "minutes": service_minutes,
        "departures": {route: int(count) for route, count in departures.items()},
    }
print(json.dumps({"stops": stops, "routes": routes, "days": days}, ensure_ascii=False))
