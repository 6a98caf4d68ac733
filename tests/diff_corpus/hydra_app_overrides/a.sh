python my_app.py db=mysql db.user=root +experiment=baseline ~model.dropout trainer.devices=[0,1]
