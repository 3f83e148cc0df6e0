module github.com/eventrelay/eventrelay/packages/analytics-go

go 1.19
