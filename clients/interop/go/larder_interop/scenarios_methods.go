package main

import (
	"context"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	// Generated from proto/ at test time (never checked in).
	adminv1 "larder/gen/go/larder/admin/v1"
	lreflv1 "larder/gen/go/larder/reflection/v1"
	larderv1 "larder/gen/go/larder/v1"
)

// ---------------------------------------------------------------------------------------------
// Scenarios: every unary method

// locations NAME CHOSEN_ID: LocationService's five methods, values read back.
func scenarioLocations() {
	name, chosenID := arg(0, "name"), arg(1, "chosen id")
	c := dial()
	svc := c.locations()
	req := &larderv1.CreateLocationRequest{Location: &larderv1.Location{Name: name, ColorHex: "#aabbcc"}}
	created := call("create", nil, req, func(ctx context.Context) (interface{}, error) {
		return svc.CreateLocation(ctx, req)
	}).reply.(*larderv1.Location)
	get := &larderv1.GetLocationRequest{Id: created.GetId()}
	got := call("get", nil, get, func(ctx context.Context) (interface{}, error) { return svc.GetLocation(ctx, get) })
	emit(step{"step": "get_equals_create", "equal": got.err == nil && proto.Equal(v2(got.reply), created)})
	call("list", nil, &larderv1.ListLocationsRequest{}, func(ctx context.Context) (interface{}, error) {
		return svc.ListLocations(ctx, &larderv1.ListLocationsRequest{})
	})
	rename := &larderv1.UpdateLocationRequest{
		Location:   &larderv1.Location{Id: created.GetId(), Name: name + " 2", ColorHex: "#000000"},
		UpdateMask: mask("name")}
	call("update_name", nil, rename, func(ctx context.Context) (interface{}, error) {
		return svc.UpdateLocation(ctx, rename)
	})
	all := &larderv1.UpdateLocationRequest{Location: &larderv1.Location{Id: created.GetId(), Name: name + " 3", ColorHex: "#123abc"}}
	updated := call("update_all", nil, all, func(ctx context.Context) (interface{}, error) {
		return svc.UpdateLocation(ctx, all)
	})
	again := call("get_updated", nil, get, func(ctx context.Context) (interface{}, error) { return svc.GetLocation(ctx, get) })
	emit(step{"step": "get_equals_update", "equal": again.err == nil && updated.err == nil && proto.Equal(v2(again.reply), v2(updated.reply))})
	del := &larderv1.DeleteLocationRequest{Id: created.GetId()}
	call("delete", nil, del, func(ctx context.Context) (interface{}, error) { return svc.DeleteLocation(ctx, del) })
	call("get_deleted", nil, get, func(ctx context.Context) (interface{}, error) { return svc.GetLocation(ctx, get) })
	call("delete_again", nil, del, func(ctx context.Context) (interface{}, error) { return svc.DeleteLocation(ctx, del) })
	// A client-chosen id (upper case here) is kept, lower case.
	chosen := &larderv1.CreateLocationRequest{Location: &larderv1.Location{Id: chosenID, Name: name + " chosen", ColorHex: "#ABCDEF"}}
	kept := call("create_chosen_id", nil, chosen, func(ctx context.Context) (interface{}, error) {
		return svc.CreateLocation(ctx, chosen)
	}).reply.(*larderv1.Location)
	delChosen := &larderv1.DeleteLocationRequest{Id: kept.GetId()}
	call("delete_chosen_id", nil, delChosen, func(ctx context.Context) (interface{}, error) {
		return svc.DeleteLocation(ctx, delChosen)
	})
	emit(step{"step": "connections", "count": c.rec.count()})
}

// groups PREFIX: CategoryGroupService and ItemCategoryService, every method.
func scenarioGroups() {
	prefix := arg(0, "prefix")
	c := dial()
	groups, items := c.groups(), c.items()
	createGroup := func(stepName, name, color string) *larderv1.CategoryGroup {
		req := &larderv1.CreateCategoryGroupRequest{CategoryGroup: &larderv1.CategoryGroup{Name: name, ColorHex: color}}
		return call(stepName, nil, req, func(ctx context.Context) (interface{}, error) {
			return groups.CreateCategoryGroup(ctx, req)
		}).reply.(*larderv1.CategoryGroup)
	}
	createItem := func(stepName, name, icon, group string) *larderv1.ItemCategory {
		req := &larderv1.CreateItemCategoryRequest{ItemCategory: &larderv1.ItemCategory{Name: name, IconName: icon, CategoryGroupId: group}}
		return call(stepName, nil, req, func(ctx context.Context) (interface{}, error) {
			return items.CreateItemCategory(ctx, req)
		}).reply.(*larderv1.ItemCategory)
	}
	getGroup := func(stepName string, req *larderv1.GetCategoryGroupRequest) {
		call(stepName, nil, req, func(ctx context.Context) (interface{}, error) { return groups.GetCategoryGroup(ctx, req) })
	}
	getItem := func(stepName, id string) {
		req := &larderv1.GetItemCategoryRequest{Id: id}
		call(stepName, nil, req, func(ctx context.Context) (interface{}, error) { return items.GetItemCategory(ctx, req) })
	}
	listItems := func(stepName, group string) {
		req := &larderv1.ListItemCategoriesRequest{CategoryGroupId: group}
		call(stepName, nil, req, func(ctx context.Context) (interface{}, error) { return items.ListItemCategories(ctx, req) })
	}
	deleteGroup := func(stepName, id string, cascade bool) {
		req := &larderv1.DeleteCategoryGroupRequest{Id: id, Cascade: cascade}
		call(stepName, nil, req, func(ctx context.Context) (interface{}, error) { return groups.DeleteCategoryGroup(ctx, req) })
	}
	updateItem := func(stepName string, req *larderv1.UpdateItemCategoryRequest) {
		call(stepName, nil, req, func(ctx context.Context) (interface{}, error) { return items.UpdateItemCategory(ctx, req) })
	}
	updateGroup := func(stepName string, req *larderv1.UpdateCategoryGroupRequest) {
		call(stepName, nil, req, func(ctx context.Context) (interface{}, error) { return groups.UpdateCategoryGroup(ctx, req) })
	}

	g1 := createGroup("create_group", prefix+" Baking", "#112233")
	g2 := createGroup("create_group2", prefix+" Pantry", "#445566")
	flour := createItem("create_item", prefix+" Flour", "bag.fill", g1.GetId())
	anise := createItem("create_item2", prefix+" Anise", "leaf", g1.GetId())
	getItem("get_item", flour.GetId())
	listItems("list_items_group", g1.GetId())
	listItems("list_items_all", "")
	getGroup("get_group_with_items", &larderv1.GetCategoryGroupRequest{Id: g1.GetId(), IncludeItemCategories: true})
	getGroup("get_group", &larderv1.GetCategoryGroupRequest{Id: g1.GetId()})
	call("list_groups", nil, &larderv1.ListCategoryGroupsRequest{}, func(ctx context.Context) (interface{}, error) {
		return groups.ListCategoryGroups(ctx, &larderv1.ListCategoryGroupsRequest{})
	})
	updateItem("update_item_icon", &larderv1.UpdateItemCategoryRequest{
		ItemCategory: &larderv1.ItemCategory{Id: flour.GetId(), Name: "ignored", IconName: "jar"}, UpdateMask: mask("icon_name")})
	updateItem("update_item_move", &larderv1.UpdateItemCategoryRequest{
		ItemCategory: &larderv1.ItemCategory{Id: flour.GetId(), CategoryGroupId: g2.GetId()}, UpdateMask: mask("category_group_id")})
	updateItem("update_item_all", &larderv1.UpdateItemCategoryRequest{
		ItemCategory: &larderv1.ItemCategory{Id: anise.GetId(), Name: prefix + " Star anise", IconName: "star.fill", CategoryGroupId: g1.GetId()}})
	listItems("list_items_group2", g2.GetId())
	updateGroup("update_group_color", &larderv1.UpdateCategoryGroupRequest{
		CategoryGroup: &larderv1.CategoryGroup{Id: g1.GetId(), Name: "ignored", ColorHex: "#abcdef"}, UpdateMask: mask("color_hex")})
	updateGroup("update_group_all", &larderv1.UpdateCategoryGroupRequest{
		CategoryGroup: &larderv1.CategoryGroup{Id: g1.GetId(), Name: prefix + " Baking 2", ColorHex: "#010203"}})
	deleteGroup("delete_group_without_cascade", g1.GetId(), false)
	deleteGroup("delete_group_cascade", g1.GetId(), true)
	getItem("get_item_after_cascade", anise.GetId())
	getGroup("get_group_deleted", &larderv1.GetCategoryGroupRequest{Id: g1.GetId()})
	del := &larderv1.DeleteItemCategoryRequest{Id: flour.GetId()}
	call("delete_item", nil, del, func(ctx context.Context) (interface{}, error) { return items.DeleteItemCategory(ctx, del) })
	getItem("get_item_deleted", flour.GetId())
	deleteGroup("delete_group2", g2.GetId(), false)
}

// meals: MealRecordService, every method, on a server of its own (the summary counts every meal).
func scenarioMeals() {
	c := dial()
	meals := c.meals()
	create := func(stepName string, m *larderv1.MealRecord) *larderv1.MealRecord {
		req := &larderv1.CreateMealRecordRequest{MealRecord: m}
		return call(stepName, nil, req, func(ctx context.Context) (interface{}, error) {
			return meals.CreateMealRecord(ctx, req)
		}).reply.(*larderv1.MealRecord)
	}
	list := func(stepName string, req *larderv1.ListMealRecordsRequest) *larderv1.ListMealRecordsResponse {
		return call(stepName, nil, req, func(ctx context.Context) (interface{}, error) {
			return meals.ListMealRecords(ctx, req)
		}).reply.(*larderv1.ListMealRecordsResponse)
	}
	update := func(stepName string, req *larderv1.UpdateMealRecordRequest) {
		call(stepName, nil, req, func(ctx context.Context) (interface{}, error) { return meals.UpdateMealRecord(ctx, req) })
	}
	summarize := func(stepName string, req *larderv1.SummarizeMealRecordsRequest) {
		call(stepName, nil, req, func(ctx context.Context) (interface{}, error) { return meals.SummarizeMealRecords(ctx, req) })
	}
	get := func(stepName, id string) {
		req := &larderv1.GetMealRecordRequest{Id: id}
		call(stepName, nil, req, func(ctx context.Context) (interface{}, error) { return meals.GetMealRecord(ctx, req) })
	}
	del := func(stepName, id string) {
		req := &larderv1.DeleteMealRecordRequest{Id: id}
		call(stepName, nil, req, func(ctx context.Context) (interface{}, error) { return meals.DeleteMealRecord(ctx, req) })
	}

	m0 := create("create_0", &larderv1.MealRecord{Name: "Oatmeal", Calories: 100,
		Category: larderv1.MealCategory_MEAL_CATEGORY_BREAKFAST, EatenAt: ts("2026-01-01T08:00:00.123456789Z")})
	m1 := create("create_1", &larderv1.MealRecord{Name: "Noodles", Calories: 200,
		Category: larderv1.MealCategory_MEAL_CATEGORY_LUNCH, EatenAt: ts("2026-01-01T12:00:00.123456789Z")})
	m2 := create("create_2", &larderv1.MealRecord{Name: "Soup", Calories: 300,
		Category: larderv1.MealCategory_MEAL_CATEGORY_DINNER, EatenAt: ts("2026-01-01T16:00:00.123456789Z")})
	get("get", m1.GetId())
	first := list("list_page_1", &larderv1.ListMealRecordsRequest{PageSize: 2})
	list("list_page_2", &larderv1.ListMealRecordsRequest{PageSize: 2, PageToken: first.GetNextPageToken()})
	list("list_lunch", &larderv1.ListMealRecordsRequest{Category: larderv1.MealCategory_MEAL_CATEGORY_LUNCH})
	list("list_range", &larderv1.ListMealRecordsRequest{StartTime: m0.GetEatenAt(), EndTime: m2.GetEatenAt()})
	update("update_calories", &larderv1.UpdateMealRecordRequest{
		MealRecord: &larderv1.MealRecord{Id: m0.GetId(), Name: "ignored", Calories: 450}, UpdateMask: mask("calories")})
	update("update_all_without_eaten_at", &larderv1.UpdateMealRecordRequest{
		MealRecord: &larderv1.MealRecord{Id: m2.GetId(), Name: "Stew", Calories: 333, Category: larderv1.MealCategory_MEAL_CATEGORY_SNACK}})
	update("update_all", &larderv1.UpdateMealRecordRequest{MealRecord: &larderv1.MealRecord{Id: m2.GetId(), Name: "Stew", Calories: 333,
		Category: larderv1.MealCategory_MEAL_CATEGORY_SNACK, EatenAt: ts("2026-01-01T20:00:00.5Z")}})
	get("get_updated", m2.GetId())
	day := &larderv1.SummarizeMealRecordsRequest{StartTime: ts("2026-01-01T00:00:00Z"), EndTime: ts("2026-01-02T00:00:00Z")}
	summarize("summarize_utc", day)
	summarize("summarize_taipei", &larderv1.SummarizeMealRecordsRequest{StartTime: day.StartTime, EndTime: day.EndTime, TimeZone: "Asia/Taipei"})
	summarize("summarize_offset_480", &larderv1.SummarizeMealRecordsRequest{StartTime: day.StartTime, EndTime: day.EndTime, UtcOffsetMinutes: 480})
	del("delete", m0.GetId())
	get("get_deleted", m0.GetId())
	now := create("create_now", &larderv1.MealRecord{Name: "Snack", Calories: 50, Category: larderv1.MealCategory_MEAL_CATEGORY_SNACK})
	list("list_after", &larderv1.ListMealRecordsRequest{})
	del("delete_now", now.GetId())
}

// admin: Admin and larder.reflection.v1, and what the generated descriptors say of the same.
func scenarioAdmin() {
	c := dial()
	admin := c.admin()
	call("server_info", nil, &adminv1.GetServerInfoRequest{}, func(ctx context.Context) (interface{}, error) {
		return admin.GetServerInfo(ctx, &adminv1.GetServerInfoRequest{})
	})
	call("metrics", nil, &adminv1.GetMetricsRequest{}, func(ctx context.Context) (interface{}, error) {
		return admin.GetMetrics(ctx, &adminv1.GetMetricsRequest{})
	})
	refl := lreflv1.NewServerReflectionClient(c.conn)
	call("list_services", nil, &lreflv1.ListServicesRequest{}, func(ctx context.Context) (interface{}, error) {
		return refl.ListServices(ctx, &lreflv1.ListServicesRequest{})
	})
	for _, name := range []string{"larder.v1.Location", "larder.v1.MealRecord", "larder.v1.MealCategory", "no.such.Type"} {
		req := &lreflv1.DescribeTypeRequest{Name: name}
		call("describe "+name, nil, req, func(ctx context.Context) (interface{}, error) { return refl.DescribeType(ctx, req) },
			step{"generated": generatedType(name)})
	}
}

// generatedType: a message's fields or an enum's values as the Go code generated from proto/
// describes them (nil for an unknown name).
func generatedType(name string) interface{} {
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(name))
	if err != nil {
		return nil
	}
	switch d := d.(type) {
	case protoreflect.MessageDescriptor:
		var fields []step
		for i := 0; i < d.Fields().Len(); i++ {
			f := d.Fields().Get(i)
			typeName := ""
			if f.Message() != nil {
				typeName = string(f.Message().FullName())
			} else if f.Enum() != nil {
				typeName = string(f.Enum().FullName())
			}
			fields = append(fields, step{"name": string(f.Name()), "json_name": f.JSONName(), "number": int(f.Number()),
				"kind": f.Kind().String(), "repeated": f.Cardinality() == protoreflect.Repeated, "type_name": typeName})
		}
		return step{"message": string(d.FullName()), "fields": fields}
	case protoreflect.EnumDescriptor:
		var values []step
		for i := 0; i < d.Values().Len(); i++ {
			v := d.Values().Get(i)
			values = append(values, step{"name": string(v.Name()), "number": int(v.Number())})
		}
		return step{"enum": string(d.FullName()), "values": values}
	}
	return nil
}
