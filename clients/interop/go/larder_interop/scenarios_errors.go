package main

import (
	"context"

	"google.golang.org/grpc"

	// Generated from proto/ at test time (never checked in).
	larderv1 "larder/gen/go/larder/v1"
)

// ---------------------------------------------------------------------------------------------
// Errors

// errors TAKEN_NAME MISSING_ID: calls that fail, each reported with the bytes grpc-go sent
// (the pytest side sends the same over the lean protocol and compares).
func scenarioErrors() {
	taken, missing := arg(0, "taken name"), arg(1, "missing id")
	c := dial()
	locs, meals, groups, items := c.locations(), c.meals(), c.groups(), c.items()
	createLoc := func(stepName string, l *larderv1.Location) {
		req := &larderv1.CreateLocationRequest{Location: l}
		call(stepName, nil, req, func(ctx context.Context) (interface{}, error) { return locs.CreateLocation(ctx, req) })
	}
	createLoc("setup_location", &larderv1.Location{Name: taken, ColorHex: "#123456"})
	gReq := &larderv1.CreateCategoryGroupRequest{CategoryGroup: &larderv1.CategoryGroup{Name: taken, ColorHex: "#123456"}}
	group := call("setup_group", nil, gReq, func(ctx context.Context) (interface{}, error) {
		return groups.CreateCategoryGroup(ctx, gReq)
	}).reply.(*larderv1.CategoryGroup)
	iReq := &larderv1.CreateItemCategoryRequest{ItemCategory: &larderv1.ItemCategory{Name: taken, IconName: "leaf", CategoryGroupId: group.GetId()}}
	call("setup_item", nil, iReq, func(ctx context.Context) (interface{}, error) { return items.CreateItemCategory(ctx, iReq) })

	createLoc("create_location_blank_name", &larderv1.Location{Name: "  "})
	createLoc("create_location_bad_color", &larderv1.Location{Name: taken + " x", ColorHex: "red"})
	createLoc("create_location_taken", &larderv1.Location{Name: taken, ColorHex: "#123456"})
	// Messages with text grpc-message must percent-encode: non-ASCII (a seeded name, taken
	// unless deleted) and "%" itself.
	createLoc("create_location_taken_unicode", &larderv1.Location{Name: "客廳", ColorHex: "#123456"})
	createLoc("setup_location_percent", &larderv1.Location{Name: taken + " 100% \u00e9", ColorHex: "#123456"})
	createLoc("create_location_taken_percent", &larderv1.Location{Name: taken + " 100% \u00e9", ColorHex: "#123456"})
	createLoc("create_location_bad_id", &larderv1.Location{Id: "not-a-uuid", Name: taken + " y", ColorHex: "#123456"})
	for _, c := range []struct{ name, id string }{{"get_location_missing", missing}, {"get_location_not_uuid", "not-a-uuid"}} {
		req := &larderv1.GetLocationRequest{Id: c.id}
		call(c.name, nil, req, func(ctx context.Context) (interface{}, error) { return locs.GetLocation(ctx, req) })
	}
	upd := &larderv1.UpdateLocationRequest{Location: &larderv1.Location{Id: missing, Name: "x", ColorHex: "#123456"}}
	call("update_location_missing", nil, upd, func(ctx context.Context) (interface{}, error) { return locs.UpdateLocation(ctx, upd) })
	dl := &larderv1.DeleteLocationRequest{Id: missing}
	call("delete_location_missing", nil, dl, func(ctx context.Context) (interface{}, error) { return locs.DeleteLocation(ctx, dl) })

	call("create_group_taken", nil, gReq, func(ctx context.Context) (interface{}, error) { return groups.CreateCategoryGroup(ctx, gReq) })
	badMask := &larderv1.UpdateCategoryGroupRequest{CategoryGroup: &larderv1.CategoryGroup{Id: group.GetId(), Name: "x"},
		UpdateMask: mask("no_such_field")}
	call("update_group_bad_mask", nil, badMask, func(ctx context.Context) (interface{}, error) {
		return groups.UpdateCategoryGroup(ctx, badMask)
	})
	dg := &larderv1.DeleteCategoryGroupRequest{Id: group.GetId()}
	call("delete_group_with_items", nil, dg, func(ctx context.Context) (interface{}, error) { return groups.DeleteCategoryGroup(ctx, dg) })
	call("create_item_taken", nil, iReq, func(ctx context.Context) (interface{}, error) { return items.CreateItemCategory(ctx, iReq) })
	orphan := &larderv1.CreateItemCategoryRequest{ItemCategory: &larderv1.ItemCategory{Name: "x", IconName: "leaf", CategoryGroupId: missing}}
	call("create_item_missing_group", nil, orphan, func(ctx context.Context) (interface{}, error) { return items.CreateItemCategory(ctx, orphan) })
	badIcon := &larderv1.CreateItemCategoryRequest{ItemCategory: &larderv1.ItemCategory{Name: "x", IconName: "no spaces!", CategoryGroupId: group.GetId()}}
	call("create_item_bad_icon", nil, badIcon, func(ctx context.Context) (interface{}, error) { return items.CreateItemCategory(ctx, badIcon) })

	for _, m := range []struct {
		name string
		meal *larderv1.MealRecord
	}{
		{"create_meal_negative_calories", &larderv1.MealRecord{Name: "x", Calories: -5, Category: larderv1.MealCategory_MEAL_CATEGORY_LUNCH}},
		{"create_meal_unspecified_category", &larderv1.MealRecord{Name: "x", Calories: 5}},
		{"create_meal_too_many_calories", &larderv1.MealRecord{Name: "x", Calories: 100001, Category: larderv1.MealCategory_MEAL_CATEGORY_LUNCH}},
	} {
		req := &larderv1.CreateMealRecordRequest{MealRecord: m.meal}
		call(m.name, nil, req, func(ctx context.Context) (interface{}, error) { return meals.CreateMealRecord(ctx, req) })
	}
	for _, l := range []struct {
		name string
		req  *larderv1.ListMealRecordsRequest
	}{
		{"list_meals_bad_token", &larderv1.ListMealRecordsRequest{PageToken: "garbage"}},
		{"list_meals_negative_page_size", &larderv1.ListMealRecordsRequest{PageSize: -1}},
	} {
		req := l.req
		call(l.name, nil, req, func(ctx context.Context) (interface{}, error) { return meals.ListMealRecords(ctx, req) })
	}
	for _, s := range []struct {
		name string
		req  *larderv1.SummarizeMealRecordsRequest
	}{
		{"summarize_end_before_start", &larderv1.SummarizeMealRecordsRequest{StartTime: ts("2026-01-02T00:00:00Z"), EndTime: ts("2026-01-01T00:00:00Z")}},
		{"summarize_unknown_time_zone", &larderv1.SummarizeMealRecordsRequest{StartTime: ts("2026-01-01T00:00:00Z"), EndTime: ts("2026-01-02T00:00:00Z"), TimeZone: "Mars/Olympus_Mons"}},
		{"summarize_missing_range", &larderv1.SummarizeMealRecordsRequest{}},
	} {
		req := s.req
		call(s.name, nil, req, func(ctx context.Context) (interface{}, error) { return meals.SummarizeMealRecords(ctx, req) })
	}
	gm := &larderv1.GetMealRecordRequest{Id: missing}
	call("get_meal_missing", nil, gm, func(ctx context.Context) (interface{}, error) { return meals.GetMealRecord(ctx, gm) })

	// Methods no stub has: ClientConn.Invoke with a path of our own, as a Go user can.
	for _, p := range []struct{ name, path string }{
		{"unknown_method", "/larder.v1.LocationService/NoSuchMethod"},
		{"unknown_service", "/no.such.Service/Method"},
	} {
		path := p.path
		req := &larderv1.GetLocationRequest{Id: missing}
		call(p.name, nil, req, func(ctx context.Context) (interface{}, error) {
			reply := &larderv1.Location{}
			return reply, c.conn.Invoke(ctx, path, req, reply)
		})
	}
	// Bytes that do not decode (a length past the end), through grpc.ForceCodec.
	undecodable := []byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f}
	call("undecodable_request", nil, nil, func(ctx context.Context) (interface{}, error) {
		var reply []byte
		err := c.conn.Invoke(ctx, "/larder.v1.LocationService/GetLocation", &undecodable, &reply, grpc.ForceCodec(rawCodec{}))
		return &larderv1.Location{}, err
	})
}
